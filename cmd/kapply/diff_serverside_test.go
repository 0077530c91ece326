package main

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapply/kapply/internal/testcluster"
)

// TestDiffServerSideAsKubectl: kapply diff takes kubectl diff's flags
// --server-side, --force-conflicts, --field-manager, --concurrency and
// --show-managed-fields (--show-managed stays). A field another manager owns
// is a conflict (exit 2) unless --force-conflicts, as in kubectl diff; then
// both show the same changes and exit 1; nothing is written.
func TestDiffServerSideAsKubectl(t *testing.T) {
	testcluster.Require(t, cluster)
	requireKubectl(t)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"cm.yaml": labelledConfigMap("cm", "a: one", "k: v1")})
	mustApply(t, dir, ns, "configmap/cm created\n")
	cms := dynClient(t).Resource(configMaps).Namespace(ns)
	if _, err := cms.Patch(context.Background(), "cm", types.MergePatchType, []byte(`{"data":{"k":"mine"}}`), metav1.PatchOptions{FieldManager: "other"}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "cm.yaml", labelledConfigMap("cm", "a: two", "k: v2"))
	diff := func(extra ...string) (result, result) {
		args := append([]string{"diff", "-f", dir, "-n", ns, "--server-side"}, extra...)
		return kapply(t, args...), kubectlRun(t, "", args...)
	}

	ours, theirs := diff()
	if ours.code != 2 || theirs.code != 2 || !strings.Contains(ours.stderr, ".data.k") || !strings.Contains(ours.stderr, `"other"`) {
		t.Errorf("conflict: kapply exit %d, kubectl exit %d\n%s", ours.code, theirs.code, ours.stderr)
	}
	ours, theirs = diff("--force-conflicts", "--concurrency", "2", "--field-manager", "kubectl")
	if ours.code != 1 || theirs.code != 1 {
		t.Errorf("--force-conflicts: kapply exit %d, kubectl exit %d\n%s\n%s", ours.code, theirs.code, ours.stderr, theirs.stderr)
	}
	for _, line := range []string{"-  k: mine\n", "+  k: v2\n", "-    a: one\n", "+    a: two\n"} {
		if !strings.Contains(ours.stdout, line) || !strings.Contains(theirs.stdout, line) {
			t.Errorf("%q not in both diffs:\nkapply:\n%s\nkubectl:\n%s", line, ours.stdout, theirs.stdout)
		}
	}
	for _, flag := range []string{"--show-managed-fields", "--show-managed"} {
		if r := kapply(t, "diff", "-f", dir, "-n", ns, "--server-side", "--force-conflicts", flag); r.code != 1 || !strings.Contains(r.stdout, "managedFields:") {
			t.Errorf("%s: exit %d\n%s", flag, r.code, r.stdout)
		}
	}
	assertData(t, cms, "cm", map[string]any{"k": "mine"})
}
