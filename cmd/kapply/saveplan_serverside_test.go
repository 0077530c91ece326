package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapply/kapply/pkg/lastapplied"
)

// TestSavedServerSidePlanSurvivesAnotherWritersMove: a plan made with
// --server-side of an object applied server-side (so it keeps kubectl's
// record) knows what its apply changes (nothing here), so another
// writer's label since does not refuse it; executed, the object is
// unchanged and its record does not claim metadata.resourceVersion (the
// API server copies a "kubectl" apply's body into the record, and the
// precondition with it).
func TestSavedServerSidePlanSurvivesAnotherWritersMove(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := context.Background()
	dir := writeFiles(t, map[string]string{"cm.yaml": configMapYAML("web", "mode", "slow")})
	mustRunKapply(t, "apply", "--server-side", "-f", dir, "-n", ns)
	planFile := filepath.Join(t.TempDir(), "plan.json")
	mustRunKapply(t, "plan", "--server-side", "-f", dir, "-n", ns, "-o", planFile)

	cms := dynamicClient(t).Resource(configMaps).Namespace(ns)
	if _, err := cms.Patch(ctx, "web", types.MergePatchType, []byte(`{"metadata":{"labels":{"team":"x"}}}`), metav1.PatchOptions{FieldManager: "controller"}); err != nil {
		t.Fatal(err)
	}
	r := kapply(t, "apply", "--plan", planFile, "-f", dir, "-n", ns)
	if r.code != 0 || !strings.Contains(r.stderr, "1 unchanged") {
		t.Fatalf("apply --plan after another writer's label: exit %d, want 0 and 1 unchanged\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	live, err := cms.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if record := live.GetAnnotations()[lastapplied.Annotation]; strings.Contains(record, "resourceVersion") {
		t.Errorf("the record claims a resourceVersion after apply --plan: %s", record)
	}
	if live.GetLabels()["team"] != "x" {
		t.Errorf("the other writer's label is gone: %v", live.GetLabels())
	}
}
