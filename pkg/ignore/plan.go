package ignore

import (
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/ownership"
	"github.com/kapply/kapply/pkg/plan"
)

// PlanFilter makes a plan (kapply plan, diff --save-plan) leave the
// fields the rules name as they are live: each existing object is planned
// from the file apply --respect-ignore would write (FileFromLive: its
// patch then does not write them), and the items lose the changes the
// rules ignore (Filter), so the table and the saved changes show only the
// others. A nil PlanFilter does nothing.
type PlanFilter struct {
	rules *Rules
	mu    sync.Mutex
	seen  map[plan.ID]respected
}

// respected is what Respect did to one object: the live object it read
// and the fields it gave live's values (or removed, live lacking them).
type respected struct {
	live *unstructured.Unstructured
	kept []fieldpath.Path
}

// NewPlanFilter filters a plan by rules; nil when rules is.
func NewPlanFilter(rules *Rules) *PlanFilter {
	if rules == nil {
		return nil
	}
	return &PlanFilter{rules: rules, seen: map[plan.ID]respected{}}
}

// FileFromLive is Respect on a file's object and its live one, for a run
// that applies (apply --respect-ignore: PlanOptions.FileFromLive). It
// keeps nothing: a run of 10,000 objects need not keep every live object.
func (rs *Rules) FileFromLive(file, live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	out, _, err := rs.Respect(plan.IDOf(file), OwnersOf(live), file.Object, live.Object)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: out}, nil
}

// FileFromLive is Rules.FileFromLive, remembering what it did for Filter;
// called concurrently by the plan's workers.
func (f *PlanFilter) FileFromLive(file, live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	id := plan.IDOf(file)
	out, kept, err := f.rules.Respect(id, OwnersOf(live), file.Object, live.Object)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.seen[id] = respected{live: live, kept: kept}
	f.mu.Unlock()
	return &unstructured.Unstructured{Object: out}, nil
}

// Filter drops from each item the changes whose field the rules ignore
// (on live, the merge or the dry run's result: a server default or an
// injection there is ignored too); a patch left with none is unchanged.
// A server-side apply records the fields its body keeps at their live
// values (KeptLive), for apply --plan to refuse the item should one move
// since. Merged and the patch are left as planned: they are what runs.
func (f *PlanFilter) Filter(p *plan.Plan) {
	if f == nil || p == nil {
		return
	}
	for i := range p.Items {
		it := &p.Items[i]
		if it.Action == plan.Prune || it.Action == plan.Delete || len(f.rules.For(it.ID)) == 0 {
			continue
		}
		r := f.seen[it.ID]
		var live map[string]any
		if r.live != nil {
			live = r.live.Object
		}
		sides := f.rules.Strip(it.ID, OwnersOf(r.live), live, it.Merged, it.DryRunResult)
		var kept []plan.Change
		for _, c := range it.Changes {
			if Kept(c.Path, sides[0], sides[1]) || Kept(c.Path, nil, sides[2]) {
				kept = append(kept, c)
			}
		}
		it.Changes = kept
		switch {
		case it.Action == plan.Update && len(kept) == 0:
			it.Action, it.Patch = plan.Unchanged, plan.Patch{}
		case it.Action == plan.Apply || it.Action == plan.Update:
			it.KeptLive = r.kept
		}
	}
}

// OwnersOf reads obj's managedFields for manager rules; nil (none, not a
// typed nil) when obj is nil or they cannot be read, which diff's
// --explain reports already.
func OwnersOf(obj *unstructured.Unstructured) Owners {
	if obj == nil {
		return nil
	}
	o, err := ownership.Owners(obj)
	if err != nil || o == nil {
		return nil
	}
	return o
}

// FilterDrift drops from status's drift the fields the rules ignore (on
// the live object, or on the file for a field removed live)
// (apply.StatusOptions.FilterDrift).
func (rs *Rules) FilterDrift(live, file *unstructured.Unstructured, d *ownership.Drift) {
	if d == nil {
		return
	}
	id, managed := plan.IDOf(file), OwnersOf(live)
	ignored := func(p fieldpath.Path) bool {
		return rs.Ignored(id, managed, live.Object, p) || rs.Ignored(id, managed, file.Object, p)
	}
	d.Changed = slices.DeleteFunc(d.Changed, func(c ownership.ChangedField) bool { return ignored(c.Path) })
	d.Foreign = slices.DeleteFunc(d.Foreign, func(f ownership.OwnedField) bool { return ignored(f.Path) })
}
