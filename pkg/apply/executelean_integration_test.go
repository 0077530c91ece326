package apply_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/apply/prune"
	"github.com/kapply/kapply/pkg/plan"
)

// leanObjects are five ConfigMaps of w at generation gen: a and b change
// with it, c, d and e do not.
func leanObjects(w *planWorld, gen int) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		k := "1"
		if name == "a" || name == "b" {
			k = fmt.Sprint(gen)
		}
		out = append(out, w.configMap(name, map[string]any{"k": k}))
	}
	return out
}

// applySetRun is how TestExecuteWithoutMergedObjects applies and plans:
// as members of ApplySet "lean" (the plan's items carry its label).
func applySetRun(w *planWorld) (apply.Options, apply.PlanOptions) {
	write := apply.WriteOptions{Namespace: w.ns}
	set := &prune.Options{ApplySet: "lean"}
	return apply.Options{Write: write, Prune: set}, apply.PlanOptions{Write: write, Prune: set}
}

// executedLean applies generation 1 in a namespace of its own, plans
// generation 2 and executes the plan (decoded from its file), with each
// patch, unchanged and apply item's Merged cleared when clear is set
// (as a lean plan file keeps them), and returns the plan and its events.
func executedLean(t *testing.T, ns string, clear bool) (*plan.Plan, []apply.Event) {
	w := newPlanWorld(t, ns)
	applyOpts, planOpts := applySetRun(w)
	events, err := w.applier.Apply(context.Background(), apply.Input{Objects: leanObjects(w, 1)}, applyOpts)
	if err != nil {
		t.Fatal(err)
	}
	failOnFailures(t, events)
	files := leanObjects(w, 2)
	p, err := w.applier.Plan(context.Background(), apply.Input{Objects: files}, planOpts)
	if err != nil {
		t.Fatal(err)
	}
	p, _ = w.roundTrip(p)
	if clear {
		for i := range p.Items {
			if a := p.Items[i].Action; a == plan.Update || a == plan.Unchanged || a == plan.Apply {
				p.Items[i].Merged = nil
			}
		}
	}
	return p, w.execute(p, apply.ExecuteOptions{Objects: apply.Input{Objects: leanObjects(w, 2)}})
}

// TestExecuteWithoutMergedObjects: a plan whose patch and unchanged items
// keep no merged object (Item.Merged cleared after Plan, as a lean plan
// file stores them) executes with the same events and results as the
// same plan with them: the items' objects are the files'. Both plans
// record their members on an ApplySet, whose check reads the items'
// labels.
func TestExecuteWithoutMergedObjects(t *testing.T) {
	requireCluster(t)
	withP, with := executedLean(t, "lean-merged", false)
	_, without := executedLean(t, "lean-cleared", true)
	actions := map[plan.Action]int{}
	for _, it := range withP.Items {
		actions[it.Action]++
	}
	if actions[plan.Update] != 2 || actions[plan.Unchanged] != 3 {
		t.Fatalf("items %v, want 2 patches and 3 unchanged", actions)
	}
	content := func(u *unstructured.Unstructured) string {
		if u == nil {
			return "<nil>"
		}
		return fmt.Sprintf("%s %v %v", u.GetName(), u.Object["data"], u.GetLabels()[prune.PartOfLabel] != "")
	}
	for i := range with {
		a, b := with[i], without[i]
		if a.Err != nil || b.Err != nil {
			t.Errorf("item %d: errors %v / %v", i, a.Err, b.Err)
			continue
		}
		if a.Outcome != b.Outcome || content(a.Object) != content(b.Object) || content(a.Result) != content(b.Result) || content(a.Live) != content(b.Live) {
			t.Errorf("item %d: with Merged %v object %s result %s live %s; without %v object %s result %s live %s", i,
				a.Outcome, content(a.Object), content(a.Result), content(a.Live), b.Outcome, content(b.Object), content(b.Result), content(b.Live))
		}
	}
}

// TestExecuteReadsByListAndKeepsLeanEvents: an executed plan reads its
// objects as Apply does — one LIST for the five ConfigMaps of one
// namespace, then only the writes, no GET per item — and with Lean and
// OnEvent it returns events cut to what identifies the object, told
// configured and unchanged as without Lean.
func TestExecuteReadsByListAndKeepsLeanEvents(t *testing.T) {
	w := newPlanWorld(t, "lean-requests")
	w.mustApply(leanObjects(w, 1)...)
	files := leanObjects(w, 2)
	p, _ := w.roundTrip(w.plan(files...))
	requests := &configMapRequests{ns: w.ns}
	applier, err := newExampleApplier(requests.wrap(cluster.Config))
	if err != nil {
		t.Fatal(err)
	}
	var handed sync.Map
	events, err := applier.Execute(context.Background(), p, apply.ExecuteOptions{Objects: apply.Input{Objects: files}, Lean: true,
		OnEvent: func(i int, ev apply.Event) { handed.Store(i, ev.Outcome) }})
	if err != nil {
		t.Fatal(err)
	}
	failOnFailures(t, events)
	if seen, want := requests.sorted(), []string{"GET ", "PATCH /a", "PATCH /b"}; !slices.Equal(seen, want) {
		t.Errorf("requests to configmaps: %q, want %q", seen, want)
	}
	for i, ev := range events {
		want := apply.Unchanged
		if name := p.Items[i].ID.Name; name == "a" || name == "b" {
			want = apply.Configured
		}
		if outcome, _ := handed.Load(i); ev.Outcome != want || outcome != want {
			t.Errorf("%s: %v (OnEvent had %v), want %v", p.Items[i].ID.Name, ev.Outcome, outcome, want)
		}
		if ev.Result == nil || ev.Result.Object["data"] != nil || ev.Live == nil || ev.Live.Object["data"] != nil {
			t.Errorf("%s: event keeps its objects (result %v, live %v), want them cut to their identity", p.Items[i].ID.Name, ev.Result, ev.Live)
		}
	}
}
