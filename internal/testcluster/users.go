package testcluster

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// UserKubeconfig adds a user to the cluster (a client certificate, as
// envtest makes them), binds it in namespace to a Role with rules and
// nothing else, and returns the path of a kubeconfig for it, removed with
// the test. The API server authorizes with RBAC: the user may do what
// rules allow, and discovery (every authenticated user's).
func (c *Cluster) UserKubeconfig(t testing.TB, namespace, user string, rules []rbacv1.PolicyRule) string {
	t.Helper()
	authenticated, err := c.env.AddUser(envtest.User{Name: user}, nil)
	if err != nil {
		t.Fatalf("adding user %s: %v", user, err)
	}
	data, err := authenticated.KubeConfig()
	if err != nil {
		t.Fatalf("writing the kubeconfig of %s: %v", user, err)
	}
	client, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		t.Fatalf("creating client: %v", err)
	}
	ctx := context.Background()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: namespace}, Rules: rules}
	if _, err := client.RbacV1().Roles(namespace).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Role %s: %v", user, err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: namespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	if _, err := client.RbacV1().RoleBindings(namespace).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating RoleBinding %s: %v", user, err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatalf("writing the kubeconfig of %s: %v", user, err)
	}
	return path
}
