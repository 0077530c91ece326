package main

import (
	"fmt"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/kapply/kapply/internal/testcluster"
)

const localSSADeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web%s}
spec:
  replicas: %s
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        env:
        - {name: A, value: "1"}%s
`

// readOnlyUser is a user of ns who may only get and list ConfigMaps and
// Deployments.
func readOnlyUser(t *testing.T, ns, name string) string {
	return cluster.UserKubeconfig(t, ns, name, []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get", "list"}},
	})
}

func deploymentFile(t *testing.T, extraLabel, replicas, extraEnv string) string {
	return writeFiles(t, map[string]string{"web.yaml": fmt.Sprintf(localSSADeployment, extraLabel, replicas, extraEnv)})
}

// A user who may only read previews server-side apply computed locally:
// a changed field, a field and a list element dropped from the file, a new
// object; nothing to do gives exit 0; a field another manager owns is a
// conflict unless --force-conflicts.
func TestDiffLocalServerSideReadOnly(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	before := deploymentFile(t, ", tier: front", "1", "\n        - {name: B, value: \"2\"}")
	if res := kapply(t, "apply", "--server-side", "-f", before, "-n", ns); res.code != 0 {
		t.Fatalf("applying: exit %d: %s", res.code, res.stderr)
	}
	kubeconfig := readOnlyUser(t, ns, "reader")

	res := kapplyVia(t, kubeconfig, "diff", "--local", "--server-side", "-f", before, "-n", ns)
	if res.code != 0 || res.stdout != "" {
		t.Errorf("unchanged: exit %d (want 0), stdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	if !strings.Contains(res.stderr, "computed locally") {
		t.Errorf("unchanged: stderr does not say the result is computed locally:\n%s", res.stderr)
	}

	after := deploymentFile(t, "", "3", "")
	res = kapplyVia(t, kubeconfig, "diff", "--local", "--server-side", "-f", after, "-n", ns)
	for _, want := range []string{"-  replicas: 1", "+  replicas: 3", "-    tier: front", "-        - name: B", "-          value: \"2\""} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("changed: diff lacks %q", want)
		}
	}
	if res.code != 1 || strings.Contains(res.stdout, "-        - name: A") {
		t.Errorf("changed: exit %d (want 1), stdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}

	// The client-side preview works with read access too.
	res = kapplyVia(t, kubeconfig, "diff", "--local", "-f", after, "-n", ns)
	if res.code != 1 || !strings.Contains(res.stdout, "+  replicas: 3") {
		t.Errorf("--local: exit %d (want 1), stdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}

	created := writeFiles(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fresh}\ndata: {a: one}\n"})
	res = kapplyVia(t, kubeconfig, "diff", "--dry-run=client", "--server-side", "-f", created, "-n", ns)
	if res.code != 1 || !strings.Contains(res.stdout, "+  a: one") {
		t.Errorf("create: exit %d (want 1), stdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}

	// Another manager takes replicas: a conflict, as the server would say.
	other := deploymentFile(t, ", tier: front", "5", "\n        - {name: B, value: \"2\"}")
	if res := kapply(t, "apply", "--server-side", "--field-manager", "scaler", "--force-conflicts", "-f", other, "-n", ns); res.code != 0 {
		t.Fatalf("applying as scaler: exit %d: %s", res.code, res.stderr)
	}
	res = kapplyVia(t, kubeconfig, "diff", "--local", "--server-side", "-f", after, "-n", ns)
	if res.code < 2 || !strings.Contains(res.stderr, "conflict") || !strings.Contains(res.stderr, ".spec.replicas") {
		t.Errorf("conflict: exit %d (want 2+ naming .spec.replicas), stdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	res = kapplyVia(t, kubeconfig, "diff", "--local", "--server-side", "--force-conflicts", "-f", after, "-n", ns)
	if res.code != 1 || !strings.Contains(res.stdout, "+  replicas: 3") {
		t.Errorf("--force-conflicts: exit %d (want 1), stdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
}

// A dry run the server refuses (403) is an error that names --local; diff
// never falls back to a local result on its own.
func TestDiffDryRunForbiddenNamesLocal(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	before := deploymentFile(t, "", "1", "")
	if res := kapply(t, "apply", "-f", before, "-n", ns); res.code != 0 {
		t.Fatalf("applying: exit %d: %s", res.code, res.stderr)
	}
	kubeconfig := readOnlyUser(t, ns, "reader")
	after := deploymentFile(t, "", "2", "")
	for _, args := range [][]string{{"diff"}, {"diff", "--server-side"}} {
		res := kapplyVia(t, kubeconfig, append(args, "-f", after, "-n", ns)...)
		want := "the server refused the dry run of deployment.apps/web -n " + ns + " (from "
		if res.code < 2 || !strings.Contains(res.stderr, want) || !strings.Contains(res.stderr, "; to preview with read access only use --local") {
			t.Errorf("%v: exit %d (want 2+), stderr lacks %q and the hint:\n%s", args, res.code, want, res.stderr)
		}
		if strings.Contains(res.stdout, "replicas") {
			t.Errorf("%v: a diff was shown anyway:\n%s", args, res.stdout)
		}
	}
}

// diff --prune --applyset computed locally needs only get and list: the
// parent is read, the members listed, nothing is written, not even as a
// dry run.
func TestDiffLocalPruneApplySetReadOnly(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	both := writeFiles(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kept}\ndata: {a: one}\n" +
		"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: gone}\ndata: {a: one}\n"})
	for _, args := range [][]string{{"apply"}, {"apply", "--server-side"}} {
		if res := kapply(t, append(args, "-f", both, "-n", ns, "--prune", "--applyset", "web")...); res.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, res.code, res.stderr)
		}
	}
	kubeconfig := cluster.UserKubeconfig(t, ns, "lister", []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets"}, Verbs: []string{"get", "list"}},
	})
	one := writeFiles(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kept}\ndata: {a: one}\n"})
	for _, args := range [][]string{{"--local"}, {"--local", "--server-side"}} {
		res := kapplyVia(t, kubeconfig, append([]string{"diff", "-f", one, "-n", ns, "--prune", "--applyset", "web"}, args...)...)
		if res.code != 1 || !strings.Contains(res.stdout, "-  name: gone") || strings.Contains(res.stdout, "name: kept") {
			t.Errorf("%v: exit %d (want 1: gone pruned, kept unchanged), stdout:\n%s\nstderr:\n%s", args, res.code, res.stdout, res.stderr)
		}
	}
}
