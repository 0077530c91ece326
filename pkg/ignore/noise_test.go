package ignore

import (
	"strings"
	"testing"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/merge"
	"github.com/kapply/kapply/pkg/plan"
)

// TestNoiseStripsAndSuggests: a rule takes the field it names out of
// both sides and the changes; a field the server defaults is classed
// under --explain and silenced by the rule --suggest-ignore writes.
func TestNoiseStripsAndSuggests(t *testing.T) {
	if NewNoise(nil, nil, false, false) != nil {
		t.Fatal("a noise filter without rules or classes")
	}
	r, err := ParseFlag("kind=Deployment,pointer=/spec/replicas", 1)
	if err != nil {
		t.Fatal(err)
	}
	rules := &Rules{}
	if err := rules.Add(r); err != nil {
		t.Fatal(err)
	}
	n := NewNoise(rules, []string{"kapply"}, true, true)
	id := plan.ID{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "ns", Name: "web"}
	live := map[string]any{"spec": map[string]any{"replicas": int64(5), "paused": false}}
	merged := map[string]any{"spec": map[string]any{"replicas": int64(2), "paused": false}}
	after := map[string]any{"spec": map[string]any{"replicas": int64(2), "paused": false, "progressDeadlineSeconds": int64(600)}}
	replicas := merge.Change{Path: fieldpath.Fields("spec", "replicas"), Old: int64(5), New: int64(2)}
	d := Diffed{ID: id, Live: live, After: after, Changes: []merge.Change{replicas}, Exists: true,
		Item: &plan.Item{Action: plan.Update, Merged: merged, Changes: plan.ChangesOf([]merge.Change{replicas}, nil)}}
	n.Adjust(&d)
	if _, ok := d.Live["spec"].(map[string]any)["replicas"]; ok || len(d.Changes) != 0 {
		t.Errorf("the ignored field is left: live %v, changes %v", d.Live, d.Changes)
	}
	if !strings.Contains(d.Notes, "spec.progressDeadlineSeconds") {
		t.Errorf("--explain's notes lack the server's field:\n%s", d.Notes)
	}
	var out, errOut strings.Builder
	if err := n.Finish(&out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "/spec/progressDeadlineSeconds") || errOut.Len() != 0 {
		t.Errorf("suggested rules:\n%s\nwarnings:\n%s", out.String(), errOut.String())
	}
}
