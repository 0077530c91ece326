package main

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapply/kapply/internal/testcluster"
)

// TestOverwriteFalseRefusesConflicts: with --overwrite=false, an object
// whose patch would change a field someone else changed since the last
// apply is refused, naming the field (never its value); the others are
// applied; exit 1. kubectl refuses the conflicting object too, with
// apimachinery's "conflicts with changes made from original to current" —
// and also the other one, since it counts its own last-applied annotation
// as changed by someone else (every patch changes it).
func TestOverwriteFalseRefusesConflicts(t *testing.T) {
	testcluster.Require(t, cluster)
	requireKubectl(t)
	ns := cluster.Namespace(t)
	cm := func(name, a, b string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\ndata: {a: \"" + a + "\", b: \"" + b + "\"}\n---\n"
	}
	dir := writeFiles(t, map[string]string{"cms.yaml": cm("taken", "1", "1") + cm("free", "1", "1")})
	mustApply(t, dir, ns, "configmap/taken created\nconfigmap/free created\n")
	cms := dynClient(t).Resource(configMaps).Namespace(ns)
	if _, err := cms.Patch(context.Background(), "taken", types.MergePatchType, []byte(`{"data":{"a":"other writer"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "cms.yaml", cm("taken", "2", "2")+cm("free", "2", "2"))

	for _, dryRun := range []string{"--dry-run=client", "--dry-run=server", "--dry-run=none"} {
		r := kapply(t, "apply", "-f", dir, "-n", ns, "--overwrite=false", dryRun)
		want := []string{"configmap/taken", "conflicts with changes made from original to current", "data.a changed since the last apply"}
		if r.code != exitFailed || !errorLineHasAll(r.stderr, want) || strings.Contains(r.stderr, "other writer") || !strings.Contains(r.stdout, "configmap/free configured") {
			t.Errorf("%s: exit %d, want 1, free configured and an error line with %q (no value):\nstdout:\n%s\nstderr:\n%s", dryRun, r.code, want, r.stdout, r.stderr)
		}
	}
	assertData(t, cms, "taken", map[string]any{"a": "other writer", "b": "1"})
	assertData(t, cms, "free", map[string]any{"a": "2", "b": "2"})

	k := kubectlRun(t, "", "apply", "-f", dir, "-n", ns, "--overwrite=false")
	if k.code != 1 || !strings.Contains(k.stderr, "conflicts with changes made from original to current") {
		t.Errorf("kubectl: exit %d\n%s", k.code, k.stderr)
	}
	assertData(t, cms, "taken", map[string]any{"a": "other writer", "b": "1"})

	mustApply(t, dir, ns, "configmap/taken configured\nconfigmap/free unchanged\n")
	assertData(t, cms, "taken", map[string]any{"a": "2", "b": "2"})
}
