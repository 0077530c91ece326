package diff

import (
	"strings"
	"testing"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/merge"
	"github.com/kapply/kapply/pkg/plan"
)

// TestFromItemSides: each action's "after" side is the one diff shows;
// changes keep their reasons and owners for --explain.
func TestFromItemSides(t *testing.T) {
	id := plan.ID{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "ns", Name: "web"}
	live := map[string]any{"spec": map[string]any{"replicas": int64(3)}}
	merged := map[string]any{"spec": map[string]any{"replicas": int64(2)}}
	result := map[string]any{"spec": map[string]any{"replicas": int64(2), "paused": false}}
	for _, tc := range []struct {
		name string
		it   plan.Item
		want map[string]any
	}{
		{"dry run wins", plan.Item{Action: plan.Update, Merged: merged, DryRunResult: result}, result},
		{"patch computed locally", plan.Item{Action: plan.Update, Merged: merged}, merged},
		{"unchanged", plan.Item{Action: plan.Unchanged, Merged: merged}, live},
		{"server-side apply, no dry run", plan.Item{Action: plan.Apply, Patch: plan.Patch{Type: plan.ApplyPatch, Data: []byte(`{"spec":{"replicas":2}}`)}}, map[string]any{"spec": map[string]any{"replicas": float64(2)}}},
		{"prune", plan.Item{Action: plan.Prune}, nil},
	} {
		tc.it.ID = id
		obj, err := FromItem(tc.it, live)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !fieldpath.Equal(obj.After, tc.want) || obj.Name != "apps.v1.Deployment.ns.web" {
			t.Errorf("%s: after %v named %q, want %v", tc.name, obj.After, obj.Name, tc.want)
		}
	}
	it := plan.Item{Action: plan.Update, ID: id, Merged: merged, Changes: []plan.Change{
		{Path: fieldpath.Fields("spec", "replicas"), Old: int64(3), New: int64(2), Reason: plan.RemovedFromFile, Owners: []string{"kubectl-scale"}},
	}}
	obj, err := FromItem(it, live)
	if err != nil {
		t.Fatal(err)
	}
	if obj.Changes[0].Reason != merge.RemovedFromFile || strings.Join(obj.Owners.Of(fieldpath.Fields("spec", "replicas")), ",") != "kubectl-scale" {
		t.Errorf("changes %+v", obj.Changes)
	}
	if _, err := FromItem(plan.Item{Action: plan.Create, ID: id}, nil); err == nil {
		t.Error("a create with no object: no error")
	}
}
