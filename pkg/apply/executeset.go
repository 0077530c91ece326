package apply

import (
	"context"
	"fmt"

	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapply/kapply/pkg/apply/prune"
	"github.com/kapply/kapply/pkg/plan"
)

// executeSet is the ApplySet an executed plan records its members on, as
// Apply with Options.ApplySet does: the superset before the members are
// written (an interrupted run forgets nobody), the members alone once
// every item, prunes included, succeeded. Without it, a plan's new kinds
// would be missing from the parent and never pruned later.
func (r *runner) executeSet(ctx context.Context, ref string, p *plan.Plan) (*prune.Set, error) {
	if ref == "" {
		return nil, nil
	}
	set, err := prune.ParseSet(ref, r.opts.Namespace, r.mapper)
	if err != nil {
		return nil, err
	}
	if err := r.fetchApplySet(ctx, set); err != nil {
		return nil, err
	}
	for _, it := range p.Items {
		if it.Action == plan.Prune || it.Action == plan.Delete {
			continue
		}
		// Plan labelled every member; an item without the set's label
		// was planned for another set, or for none. A patch item of a
		// decoded plan keeps no merged object, and its patch holds the
		// label only if it changes: the tamper check re-plans it from the
		// files labelled as the set's (fileIndex.label).
		if id := it.Labels()[prune.PartOfLabel]; id != set.ID() && labelsKnown(it) {
			return nil, fmt.Errorf("%s was not planned as a member of ApplySet %s (its %s label is %q): plan with --applyset=%s", it.ID, set, prune.PartOfLabel, id, ref)
		}
		ns := it.ID.Namespace
		if ns == "" {
			ns = r.opts.Namespace
		}
		set.AddMember(k8sschema.GroupKind{Group: it.ID.Group, Kind: it.ID.Kind}, ns)
	}
	return set, nil
}

// finishSet records the set as the plan left it, once every item
// succeeded; otherwise the superset stays, so the next run tries again.
func (x *execution) finishSet(ctx context.Context, set *prune.Set) {
	if set == nil || AnyFailed(x.events) {
		return
	}
	if err := x.r.writeParent(ctx, set, false); err != nil {
		x.setErr = err
	}
}

// labelsKnown tells whether the item holds its object's labels: a merged
// object, or a server-side apply item's patch (the whole object).
func labelsKnown(it plan.Item) bool {
	return it.Merged != nil || it.Action == plan.Apply
}
