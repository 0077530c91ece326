package main

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapply/kapply/internal/testcluster"
)

const ssaDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {%s}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx:1.27}]
`

// TestServerSideSwitchAndConflicts: an object applied client-side is
// switched to server-side apply; a label then removed from the file is
// deleted (no field stuck with the old client-side manager); a field
// another manager owns gives a conflict naming it, --force-conflicts takes
// it; switching back to client-side apply still deletes dropped labels.
func TestServerSideSwitchAndConflicts(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	deploy := func(labels string) string { return strings.Replace(ssaDeployment, "%s", labels, 1) }
	dir := writeFiles(t, map[string]string{"web.yaml": deploy("app: web, a: one, b: two, c: three")})
	mustApply(t, dir, ns, "deployment.apps/web created\n")

	ssa := func(extra ...string) result {
		return kapply(t, append([]string{"apply", "-f", dir, "-n", ns, "--server-side"}, extra...)...)
	}
	// The switch moves field ownership (managedFields change: configured);
	// the same apply again changes nothing. stdout says it as kubectl
	// --server-side does, the summary on stderr tells which.
	ssaLine := "deployment.apps/web serverside-applied\n"
	configured, unchanged := "0 created, 1 configured, 0 unchanged, 0 failed", "0 created, 0 configured, 1 unchanged, 0 failed"
	if r := ssa(); r.code != 0 || r.stdout != ssaLine || !strings.Contains(r.stderr, configured) {
		t.Fatalf("switch to server-side: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := ssa(); r.code != 0 || r.stdout != ssaLine || !strings.Contains(r.stderr, unchanged) {
		t.Fatalf("server-side again: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	writeFile(t, dir, "web.yaml", deploy("app: web, a: one, c: three"))
	if r := ssa(); r.code != 0 || r.stdout != ssaLine || !strings.Contains(r.stderr, configured) {
		t.Fatalf("drop label b: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	assertLabels(t, ns, "a=one,app=web,c=three")

	deployments := dynClient(t).Resource(deployments).Namespace(ns)
	scale := []byte(`{"spec":{"replicas":5}}`)
	if _, err := deployments.Patch(context.Background(), "web", types.MergePatchType, scale, metav1.PatchOptions{FieldManager: "kubectl-scale"}, "scale"); err != nil {
		t.Fatal(err)
	}
	r := ssa()
	if r.code != exitFailed || !strings.Contains(r.stderr, ".spec.replicas") || !strings.Contains(r.stderr, "kubectl-scale") || !strings.Contains(r.stderr, "--force-conflicts") {
		t.Errorf("conflict: exit %d\n%s", r.code, r.stderr)
	}
	if r := ssa("--force-conflicts"); r.code != 0 {
		t.Fatalf("--force-conflicts: exit %d\n%s", r.code, r.stderr)
	}
	live, err := deployments.Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if replicas, _, _ := unstructuredInt(live.Object, "spec", "replicas"); replicas != 2 {
		t.Errorf("replicas %d after --force-conflicts, want 2", replicas)
	}

	writeFile(t, dir, "web.yaml", deploy("app: web, a: one"))
	mustApply(t, dir, ns, "deployment.apps/web configured\n")
	assertLabels(t, ns, "a=one,app=web")
}

func assertLabels(t *testing.T, ns, want string) {
	t.Helper()
	live, err := dynClient(t).Resource(deployments).Namespace(ns).Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := metav1.FormatLabelSelector(&metav1.LabelSelector{MatchLabels: live.GetLabels()}); got != want {
		t.Errorf("labels %s, want %s", got, want)
	}
}

func unstructuredInt(obj map[string]any, path ...string) (int64, bool, error) {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return 0, false, nil
		}
		cur = m[p]
	}
	n, ok := cur.(int64)
	return n, ok, nil
}
