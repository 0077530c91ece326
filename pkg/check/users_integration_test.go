package check_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapply/kapply/internal/testcluster"
	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/check"
)

var (
	readAdmission = rbacv1.PolicyRule{APIGroups: []string{"admissionregistration.k8s.io"}, Verbs: []string{"get", "list"},
		Resources: []string{"validatingadmissionpolicies", "validatingadmissionpolicybindings", "mutatingadmissionpolicies", "mutatingadmissionpolicybindings", "mutatingwebhookconfigurations"}}
	readNamespaces = rbacv1.PolicyRule{APIGroups: []string{""}, Verbs: []string{"get", "list"}, Resources: []string{"namespaces"}}
	// readParams: the corpus's param kind, in every namespace.
	readParams  = rbacv1.PolicyRule{APIGroups: []string{""}, Verbs: []string{"get", "list"}, Resources: []string{"configmaps"}}
	readObjects = rbacv1.PolicyRule{APIGroups: []string{"", "apps"}, Verbs: []string{"get", "list"}, Resources: []string{"configmaps", "deployments"}}
)

// readerKubeconfig is a user who may get and list what the rules name,
// cluster-wide, and nothing else.
func readerKubeconfig(t *testing.T, ns, name string, rules ...rbacv1.PolicyRule) string {
	t.Helper()
	path := cluster.UserKubeconfig(t, ns, name, []rbacv1.PolicyRule{readObjects})
	ctx := context.Background()
	kube := newEnv(t, cluster.Config).clients.Kube
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
	if _, err := kube.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}}}
	if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kube.RbacV1().ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{})
		_ = kube.RbacV1().ClusterRoles().Delete(ctx, name, metav1.DeleteOptions{})
	})
	return path
}

// TestCheckAsReader: a user who may only get and list gets the same
// verdicts as the admin; one who may not list the policies gets a
// RefusedError naming them, not a pass.
func TestCheckAsReader(t *testing.T) {
	testcluster.Require(t, cluster)
	ns, admin := corpusNamespace(t)
	p := planCorpus(t, admin, ns)
	reader := userEnv(t, readerKubeconfig(t, ns, ns+"-reader", readAdmission, readNamespaces, readParams))
	checker, err := check.Load(context.Background(), reader.clients)
	if err != nil {
		t.Fatalf("a get/list user: %v", err)
	}
	if err := checker.Plan(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	for _, it := range p.Items {
		if got, want := summary(it.Verdicts, ns), corpusVerdicts[it.ID.Name]; !slices.Equal(got, want) {
			t.Errorf("%s: verdicts %v, want %v", it.ID.Name, got, want)
		}
	}

	for _, missing := range []struct {
		name  string
		rules []rbacv1.PolicyRule
		what  string
	}{
		{"nopolicies", []rbacv1.PolicyRule{readNamespaces, readParams}, "validatingadmissionpolicies"},
		{"nonamespaces", []rbacv1.PolicyRule{readAdmission, readParams}, "namespaces"},
		{"noparams", []rbacv1.PolicyRule{readAdmission, readNamespaces}, "params (ConfigMap v1)"},
	} {
		user := userEnv(t, readerKubeconfig(t, ns, ns+"-"+missing.name, missing.rules...))
		_, err := check.Load(context.Background(), user.clients)
		var refused *check.RefusedError
		if !errors.As(err, &refused) || !strings.Contains(err.Error(), missing.what) {
			t.Errorf("%s: Load = %v, want a RefusedError naming %s", missing.name, err, missing.what)
		}
	}
}

// TestCheckUnknown: where a mutating webhook matches the object, or an
// expression asks the authorizer, the verdict is unknown and says why.
func TestCheckUnknown(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	admin := newEnv(t, cluster.Config)
	labelNamespace(t, admin, ns, map[string]string{"kapply-check": ns})
	admin.create(readCorpus(t, "unknown.yaml", ns))
	objects := readCorpus(t, "corpus/params.yaml", ns)[:2]
	objects[0].SetLabels(map[string]string{"mutate": "yes"})
	objects[1].SetLabels(nil)
	p, err := admin.applier().Plan(context.Background(), apply.Input{Objects: objects}, apply.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checker, err := check.Load(context.Background(), admin.clients)
	if err != nil {
		t.Fatal(err)
	}
	if err := checker.Plan(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"limits":         "mutating webhook mutator.kapply.dev of " + ns + "-mutator",
		"word-forbidden": ns + "-asks",
	}
	for _, it := range p.Items {
		if len(it.Verdicts) != 1 || it.Verdicts[0].Outcome != "unknown" || it.Verdicts[0].Policy != want[it.ID.Name] {
			t.Errorf("%s: verdicts %+v, want one unknown by %s", it.ID.Name, it.Verdicts, want[it.ID.Name])
		}
	}
}
