package main

import (
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/ignore"
	"github.com/kapply/kapply/pkg/plan"
)

// planIgnore makes a plan (kapply plan, diff --save-plan) leave the
// fields the ignore rules name as they are live: each existing object is
// planned from the file apply --respect-ignore would write (its patch
// then does not write them), and the items lose the changes the rules
// ignore, so the table and the saved changes show only the others.
type planIgnore struct {
	rules *ignore.Rules
	mu    sync.Mutex
	seen  map[plan.ID]respected
}

// respected is what Respect did to one object: the live object it read
// and the fields it gave live's values (or removed, live lacking them).
type respected struct {
	live *unstructured.Unstructured
	kept []fieldpath.Path
}

// forPlan is nil when no rules are given.
func (o ignoreOptions) forPlan() (*planIgnore, error) {
	rules, err := o.load()
	if rules == nil {
		return nil, err
	}
	return &planIgnore{rules: rules, seen: map[plan.ID]respected{}}, nil
}

// set puts the rules in the plan's options; a nil planIgnore sets nothing.
func (pi *planIgnore) set(opts *apply.PlanOptions) {
	if pi == nil {
		return
	}
	// Manager rules read the live objects' managedFields.
	opts.NoManagedFields = false
	opts.FileFromLive = pi.fileFromLive
}

// fileFromLive is Respect, remembering what it did for filter (not for
// apply --respect-ignore, whose seen is nil: a run of 10,000 objects
// need not keep every live object); called concurrently by the workers.
func (pi *planIgnore) fileFromLive(file, live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	id := plan.IDOf(file)
	out, kept, err := pi.rules.Respect(id, managedIfAny(managedOf(live)), file.Object, live.Object)
	if err != nil {
		return nil, err
	}
	if pi.seen != nil {
		pi.mu.Lock()
		pi.seen[id] = respected{live: live, kept: kept}
		pi.mu.Unlock()
	}
	return &unstructured.Unstructured{Object: out}, nil
}

// filter drops from each item the changes whose field the rules ignore
// (on live, the merge or the dry run's result: a server default or an
// injection there is ignored too); a patch left with none is unchanged.
// A server-side apply records the fields its body keeps at their live
// values (KeptLive), for apply --plan to refuse the item should one move
// since. Merged and the patch are left as planned: they are what runs.
func (pi *planIgnore) filter(p *plan.Plan) {
	if pi == nil || p == nil {
		return
	}
	for i := range p.Items {
		it := &p.Items[i]
		if it.Action == plan.Prune || it.Action == plan.Delete || len(pi.rules.For(it.ID)) == 0 {
			continue
		}
		r := pi.seen[it.ID]
		sides := pi.rules.Strip(it.ID, managedIfAny(managedOf(r.live)), content(r.live), it.Merged, it.DryRunResult)
		var kept []plan.Change
		for _, c := range it.Changes {
			if ignore.Kept(c.Path, sides[0], sides[1]) || ignore.Kept(c.Path, nil, sides[2]) {
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
