package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/internal/testcluster"
	"github.com/kapply/kapply/pkg/plan"
)

// checkPolicies deny a ConfigMap without a team label and warn of one
// with more than two keys, in namespace NS only.
const checkPolicies = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: NS-team}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
  validations:
  - expression: "has(object.metadata.labels) && 'team' in object.metadata.labels"
    message: a ConfigMap needs a team label
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: NS-team}
spec:
  policyName: NS-team
  validationActions: [Deny]
  matchResources:
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: NS}}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: NS-size}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
  validations:
  - expression: "!has(object.data) || size(object.data) <= 2"
    message: too many keys
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: NS-size}
spec:
  policyName: NS-size
  validationActions: [Warn]
  matchResources:
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: NS}}
`

// withCheckPolicies installs checkPolicies for ns (removed with the test)
// and waits until the server enforces them.
func withCheckPolicies(t *testing.T, ns string) {
	t.Helper()
	dir := writeFiles(t, map[string]string{"p.yaml": strings.ReplaceAll(checkPolicies, "NS", ns)})
	mustRunKapply(t, "apply", "-f", dir)
	t.Cleanup(func() { kapply(t, "delete", "-f", dir) })
	probe := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "probe", "namespace": ns}}}
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, err := dynamicClient(t).Resource(configMaps).Namespace(ns).Create(context.Background(), probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil && strings.Contains(err.Error(), ns+"-team") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server does not enforce the policies: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestCheckFlag: --check on plan, diff and apply names each denial and
// exits 3; apply then writes nothing, not even the objects no policy
// denies. A warned object is shown and applied. The plan file keeps the
// verdicts.
func TestCheckFlag(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	withCheckPolicies(t, ns)
	dir := writeFiles(t, map[string]string{
		"good.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: good, labels: {team: a}}\ndata: {a: '1', b: '2', c: '3'}\n",
		"bad.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad}\ndata: {a: '1'}\n",
	})
	denial := "denied by --check: ConfigMap/bad -n " + ns + ": ValidatingAdmissionPolicy " + ns + "-team (binding " + ns + "-team): a ConfigMap needs a team label"
	warning := "Warning: ConfigMap/good -n " + ns + ": ValidatingAdmissionPolicy " + ns + "-size (binding " + ns + "-size): too many keys"
	planFile := filepath.Join(t.TempDir(), "plan.json")
	for _, args := range [][]string{
		{"plan", "--check", "-f", dir, "-n", ns, "-o", planFile},
		// --local: a server dry run would run the policies itself (its
		// denial is then the object's error, exit 2).
		{"diff", "--check", "--local", "-f", dir, "-n", ns},
		{"apply", "--check", "-f", dir, "-n", ns},
	} {
		r := kapply(t, args...)
		out := r.stdout + r.stderr
		if r.code != 3 || !strings.Contains(out, denial) || !strings.Contains(out, warning) {
			t.Errorf("%s: exit %d, want 3 with %q and %q:\n%s", args[0], r.code, denial, warning, out)
		}
	}
	p := readPlanFile(t, planFile)
	for _, it := range p.Items {
		want := map[string]plan.Outcome{"good": plan.Warned, "bad": plan.Denied}[it.ID.Name]
		if len(it.Verdicts) != 1 || it.Verdicts[0].Outcome != want {
			t.Errorf("plan file: %s has verdicts %+v, want one %s", it.ID.Name, it.Verdicts, want)
		}
	}
	for _, name := range []string{"good", "bad"} {
		if _, err := dynamicClient(t).Resource(configMaps).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{}); err == nil {
			t.Errorf("apply --check wrote %s although a policy denies bad", name)
		}
	}
	if err := os.Remove(filepath.Join(dir, "bad.yaml")); err != nil {
		t.Fatal(err)
	}
	if r := kapply(t, "apply", "--check", "-f", dir, "-n", ns); r.code != 0 || !strings.Contains(r.stderr, warning) {
		t.Errorf("apply --check of the good file: exit %d, want 0 with the warning:\n%s%s", r.code, r.stdout, r.stderr)
	}
	configMapData(t, ns, "good")
}

// TestCheckRefused: a user who may not list the policies gets a named
// refusal, exit 2, from each command; nothing is written.
func TestCheckRefused(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	kubeconfig := cluster.UserKubeconfig(t, ns, "nolist", []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "create", "patch"}},
	})
	dir := writeFiles(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {a: '1'}\n"})
	for _, args := range [][]string{
		{"plan", "--check", "-f", dir, "-n", ns, "-o", filepath.Join(t.TempDir(), "plan.json")},
		{"diff", "--check", "--local", "-f", dir, "-n", ns},
		{"apply", "--check", "-f", dir, "-n", ns},
	} {
		r := kapplyVia(t, kubeconfig, args...)
		if r.code != 2 || !strings.Contains(r.stderr, "cannot check admission policies: listing namespaces") {
			t.Errorf("%s: exit %d, want 2 with the refusal:\n%s%s", args[0], r.code, r.stdout, r.stderr)
		}
	}
	if _, err := dynamicClient(t).Resource(configMaps).Namespace(ns).Get(context.Background(), "cm", metav1.GetOptions{}); err == nil {
		t.Error("apply --check wrote cm although the check was refused")
	}
}
