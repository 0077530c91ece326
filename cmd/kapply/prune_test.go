package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapply/kapply/internal/testcluster"
)

// fiveConfigMaps writes five ConfigMaps labelled app=shop.
func fiveConfigMaps(t *testing.T) string {
	t.Helper()
	files := map[string]string{}
	for i := 1; i <= 5; i++ {
		files[fmt.Sprintf("cm%d.yaml", i)] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm%d, labels: {app: shop}}\ndata: {i: \"%d\"}\n", i, i)
	}
	return writeFiles(t, files)
}

func liveConfigMaps(t *testing.T, ns string) []string {
	t.Helper()
	list, err := dynClient(t).Resource(configMaps).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, item := range list.Items {
		if item.GetName() != "kube-root-ca.crt" {
			names = append(names, item.GetName())
		}
	}
	return names
}

// TestPruneApplySetDeletesExactlyTheDroppedObject: five members, one file
// removed: apply --prune deletes that object and nothing else, not even an
// object with the same labels outside the set; the parent records the set.
func TestPruneApplySetDeletesExactlyTheDroppedObject(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := fiveConfigMaps(t)
	outsider := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "outsider", "labels": map[string]any{"app": "shop"}}}}
	if _, err := dynClient(t).Resource(configMaps).Namespace(ns).Create(context.Background(), outsider, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	prune := []string{"apply", "-f", dir, "-n", ns, "--prune", "--applyset=shop"}
	if r := kapply(t, prune...); r.code != 0 || strings.Count(r.stdout, " created\n") != 5 {
		t.Fatalf("first apply: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if err := os.Remove(filepath.Join(dir, "cm3.yaml")); err != nil {
		t.Fatal(err)
	}
	r := kapply(t, prune...)
	if r.code != 0 || !strings.Contains(r.stdout, "configmap/cm3 pruned\n") || strings.Count(r.stdout, " pruned\n") != 1 {
		t.Fatalf("prune: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := strings.Join(liveConfigMaps(t, ns), ","); got != "cm1,cm2,cm4,cm5,outsider" {
		t.Errorf("live configmaps %s", got)
	}
	parent, err := dynClient(t).Resource(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}).Namespace(ns).Get(context.Background(), "shop", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if kinds := parent.GetAnnotations()["applyset.kubernetes.io/contains-group-kinds"]; kinds != "ConfigMap" {
		t.Errorf("parent records kinds %q", kinds)
	}
}

// TestPruneNothingWhenAFileIsMalformed: a run that could not load every file
// prunes nothing, and says so.
func TestPruneNothingWhenAFileIsMalformed(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := fiveConfigMaps(t)
	prune := []string{"apply", "-f", dir, "-n", ns, "--prune", "--applyset=shop"}
	if r := kapply(t, prune...); r.code != 0 {
		t.Fatalf("first apply: exit %d\n%s", r.code, r.stderr)
	}
	writeFile(t, dir, "cm2.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [broken\n")
	r := kapply(t, prune...)
	if r.code != exitFailed || !strings.Contains(r.stderr, "not pruning") || strings.Contains(r.stdout, "pruned") {
		t.Errorf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := len(liveConfigMaps(t, ns)); got != 5 {
		t.Errorf("%d configmaps left, want 5", got)
	}
}

// TestPruneEmptyNeedsConsent: no objects at all prunes nothing unless
// --prune-allow-empty says so.
func TestPruneEmptyNeedsConsent(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := fiveConfigMaps(t)
	if r := kapply(t, "apply", "-f", dir, "-n", ns, "--prune", "--applyset=shop"); r.code != 0 {
		t.Fatalf("first apply: exit %d\n%s", r.code, r.stderr)
	}
	// An empty directory is a load error (as in kubectl); a file without
	// objects is an empty set of files.
	empty := writeFiles(t, map[string]string{"none.yaml": "# nothing declared\n"})
	r := kapply(t, "apply", "-f", empty, "-n", ns, "--prune", "--applyset=shop")
	if r.code != exitFailed || !strings.Contains(r.stderr, "--prune-allow-empty") || len(liveConfigMaps(t, ns)) != 5 {
		t.Errorf("without consent: exit %d\n%s", r.code, r.stderr)
	}
	r = kapply(t, "apply", "-f", empty, "-n", ns, "--prune", "--applyset=shop", "--prune-allow-empty")
	if r.code != 0 || strings.Count(r.stdout, " pruned\n") != 5 || len(liveConfigMaps(t, ns)) != 0 {
		t.Errorf("with consent: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestPruneDryRunListsWithoutDeleting.
func TestPruneDryRunListsWithoutDeleting(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := fiveConfigMaps(t)
	if r := kapply(t, "apply", "-f", dir, "-n", ns, "--prune", "--applyset=shop"); r.code != 0 {
		t.Fatalf("first apply: exit %d\n%s", r.code, r.stderr)
	}
	if err := os.Remove(filepath.Join(dir, "cm1.yaml")); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"client", "server"} {
		r := kapply(t, "apply", "-f", dir, "-n", ns, "--prune", "--applyset=shop", "--dry-run="+mode)
		if r.code != 0 || !strings.Contains(r.stdout, "configmap/cm1 pruned (") {
			t.Errorf("--dry-run=%s: exit %d\n%s\n%s", mode, r.code, r.stdout, r.stderr)
		}
	}
	if got := len(liveConfigMaps(t, ns)); got != 5 {
		t.Errorf("%d configmaps left after dry runs, want 5", got)
	}
}

// TestPruneBySelector is kubectl's older form: objects matching -l of the
// allowlisted kinds with a last-applied record go when the files drop them;
// an object with the labels but no record, and a Namespace, stay.
func TestPruneBySelector(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := fiveConfigMaps(t)
	imperative := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "imperative", "labels": map[string]any{"app": "shop"}}}}
	if _, err := dynClient(t).Resource(configMaps).Namespace(ns).Create(context.Background(), imperative, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if r := kapply(t, "apply", "-f", dir, "-n", ns, "--prune", "-l", "app=shop"); r.code != 0 {
		t.Fatalf("first apply: exit %d\n%s", r.code, r.stderr)
	}
	if err := os.Remove(filepath.Join(dir, "cm5.yaml")); err != nil {
		t.Fatal(err)
	}
	r := kapply(t, "apply", "-f", dir, "-n", ns, "--prune", "-l", "app=shop")
	if r.code != 0 || !strings.Contains(r.stdout, "configmap/cm5 pruned\n") || strings.Count(r.stdout, "pruned") != 1 {
		t.Errorf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := strings.Join(liveConfigMaps(t, ns), ","); got != "cm1,cm2,cm3,cm4,imperative" {
		t.Errorf("live configmaps %s", got)
	}
	if r := kapply(t, "apply", "-f", dir, "-n", ns, "--prune"); r.code != exitFailed {
		t.Errorf("--prune without -l or --applyset: exit %d", r.code)
	}
}

// TestPruneNeverDeletesANamespaceImplicitly: a Namespace member dropped from
// the files is left alone with a warning.
func TestPruneNeverDeletesANamespaceImplicitly(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	member := "member-of-" + ns
	dir := writeFiles(t, map[string]string{
		"ns.yaml": fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n", member),
		"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n",
	})
	if r := kapply(t, "apply", "-f", dir, "-n", ns, "--prune", "--applyset=shop"); r.code != 0 {
		t.Fatalf("first apply: exit %d\n%s", r.code, r.stderr)
	}
	if err := os.Remove(filepath.Join(dir, "ns.yaml")); err != nil {
		t.Fatal(err)
	}
	r := kapply(t, "apply", "-f", dir, "-n", ns, "--prune", "--applyset=shop")
	if r.code != 0 || strings.Contains(r.stdout, "pruned") || !strings.Contains(r.stderr, "never pruned implicitly") {
		t.Errorf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	namespaces := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	live, err := dynClient(t).Resource(namespaces).Get(context.Background(), member, metav1.GetOptions{})
	if err != nil || live.GetDeletionTimestamp() != nil {
		t.Errorf("namespace %s: %v, deleting: %v", member, err, live.GetDeletionTimestamp())
	}
}

// TestPruneInteropWithKubectl: kubectl prunes a set kapply made, and kapply
// prunes a set kubectl made.
func TestPruneInteropWithKubectl(t *testing.T) {
	testcluster.Require(t, cluster)
	t.Setenv("KUBECTL_APPLYSET", "true")
	if out, err := exec.Command("kubectl", "apply", "--help").Output(); err != nil || !strings.Contains(string(out), "--applyset") {
		t.Skip("the kubectl on PATH has no ApplySet support")
	}
	for _, first := range []string{"kapply", "kubectl"} {
		t.Run(first+" first", func(t *testing.T) {
			ns := cluster.Namespace(t)
			dir := fiveConfigMaps(t)
			args := []string{"apply", "-f", dir, "-n", ns, "--prune", "--applyset=shared"}
			second := "kubectl"
			if first == "kubectl" {
				kubectl(t, args...)
				second = "kapply"
			} else if r := kapply(t, args...); r.code != 0 {
				t.Fatalf("kapply: exit %d\n%s", r.code, r.stderr)
			}
			if err := os.Remove(filepath.Join(dir, "cm2.yaml")); err != nil {
				t.Fatal(err)
			}
			var out string
			if second == "kubectl" {
				out = kubectl(t, args...)
			} else {
				r := kapply(t, args...)
				out = r.stdout
				if r.code != 0 {
					t.Fatalf("kapply: exit %d\n%s", r.code, r.stderr)
				}
			}
			if !strings.Contains(out, "configmap/cm2 pruned") {
				t.Errorf("%s did not prune cm2:\n%s", second, out)
			}
			if got := strings.Join(liveConfigMaps(t, ns), ","); got != "cm1,cm3,cm4,cm5" {
				t.Errorf("live configmaps %s", got)
			}
		})
	}
}

// TestDiffShowsWhatPruneWouldDelete: diff --prune --applyset shows the
// dropped member as removed, exits 1, and deletes nothing.
func TestDiffShowsWhatPruneWouldDelete(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := fiveConfigMaps(t)
	if r := kapply(t, "apply", "-f", dir, "-n", ns, "--prune", "--applyset=shop"); r.code != 0 {
		t.Fatalf("first apply: exit %d\n%s", r.code, r.stderr)
	}
	if r := kapply(t, "diff", "-f", dir, "-n", ns, "--prune", "--applyset=shop"); r.code != 0 || r.stdout != "" {
		t.Errorf("diff before any change: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if err := os.Remove(filepath.Join(dir, "cm4.yaml")); err != nil {
		t.Fatal(err)
	}
	r := kapply(t, "diff", "-f", dir, "-n", ns, "--prune", "--applyset=shop", "--summary")
	want := strings.ReplaceAll("= configmap/cm1 NS\n= configmap/cm2 NS\n= configmap/cm3 NS\n= configmap/cm5 NS\n- configmap/cm4 NS\n", "NS", "-n "+ns)
	if r.code != exitDifferences || r.stdout != want {
		t.Errorf("diff --summary: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = kapply(t, "diff", "-f", dir, "-n", ns, "--prune", "--applyset=shop")
	if r.code != exitDifferences || !strings.Contains(r.stdout, "-  name: cm4\n") || strings.Contains(r.stdout, "+  name: cm4") {
		t.Errorf("diff: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := len(liveConfigMaps(t, ns)); got != 5 {
		t.Errorf("%d configmaps after diff, want 5", got)
	}
}

// TestPruneNothingWhenAnObjectCannotBeMapped: an object whose kind cannot be
// mapped (a typo in apiVersion) has no settled identity; its live copy must
// not look undeclared, so nothing is pruned.
func TestPruneNothingWhenAnObjectCannotBeMapped(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := fiveConfigMaps(t)
	prune := []string{"apply", "-f", dir, "-n", ns, "--prune", "--applyset=shop"}
	if r := kapply(t, prune...); r.code != 0 {
		t.Fatalf("first apply: exit %d\n%s", r.code, r.stderr)
	}
	writeFile(t, dir, "cm1.yaml", "apiVersion: v2\nkind: ConfigMap\nmetadata: {name: cm1, labels: {app: shop}}\n")
	r := kapply(t, prune...)
	if r.code != exitFailed || strings.Contains(r.stdout, "pruned") || !strings.Contains(r.stderr, "not pruning") {
		t.Errorf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := len(liveConfigMaps(t, ns)); got != 5 {
		t.Errorf("%d configmaps left, want 5", got)
	}
}

// TestClusterScopedObjectWithANamespace: a cluster-scoped object whose file
// names a namespace (kustomize does that to kinds it does not know) applies,
// re-applies unchanged and is never pruned as undeclared.
func TestClusterScopedObjectWithANamespace(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	name := "reader-" + ns
	dir := writeFiles(t, map[string]string{
		"role.yaml": fmt.Sprintf("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: %s, namespace: %s}\nrules: [{apiGroups: [\"\"], resources: [pods], verbs: [get]}]\n", name, ns),
	})
	prune := []string{"apply", "-f", dir, "-n", ns, "--prune", "--applyset=roles"}
	ref := "clusterrole.rbac.authorization.k8s.io/" + name
	if r := kapply(t, prune...); r.code != 0 || r.stdout != ref+" created\n" {
		t.Fatalf("first apply: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := kapply(t, prune...); r.code != 0 || r.stdout != ref+" unchanged\n" {
		t.Errorf("second apply: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
