package apply

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/kapply/kapply/pkg/ownership"
	"github.com/kapply/kapply/pkg/plan"
)

// dryRunAll is the dryRun of the server dry runs a plan sends, whatever
// the run's own mode (a client dry run, so nothing else writes).
var dryRunAll = []string{metav1.DryRunAll}

// planOne plans one prepared object against live (nil: absent) as
// createOrUpdate would write it, hands the item to the run's planSink and
// returns the event Apply's dry run would give. Nothing is written: a
// server dry run is sent only when the plan asks for one.
func (r *runner) planOne(ctx context.Context, client dynamic.ResourceInterface, o *object, live *unstructured.Unstructured) Event {
	var it plan.Item
	var ev Event
	var err error
	switch {
	case r.opts.ServerSide:
		it, ev, err = r.planServerSide(ctx, client, o, live)
	case live == nil:
		it, ev, err = r.planCreate(ctx, client, o)
	default:
		it, ev, err = r.planPatch(ctx, client, o, live)
	}
	if err != nil {
		ev.Outcome, ev.Err, ev.Result = Failed, err, nil
		return ev
	}
	r.planning.put(o, it.KeyedBy(o.key, live))
	return ev
}

// planCreate is the create item of the object, sent as create would send
// it: with its record, without nulls.
func (r *runner) planCreate(ctx context.Context, client dynamic.ResourceInterface, o *object) (plan.Item, Event, error) {
	return r.planCreateSalted(ctx, client, o, nil)
}

// planCreateSalted is planCreate with saltFrom (nil: none) lending a
// redacted Secret record its salt, as live does a patch's: Execute re-plans
// a create with the plan's own object, so that the same file gives the
// same record (see replan).
func (r *runner) planCreateSalted(ctx context.Context, client dynamic.ResourceInterface, o *object, saltFrom *unstructured.Unstructured) (plan.Item, Event, error) {
	body, warnings, err := r.withLastApplied(o, saltFrom)
	ev := o.event(Event{Outcome: Created, Result: body, Warnings: warnings})
	if err != nil {
		return plan.Item{}, ev, err
	}
	pruneNulls(body.Object)
	it := plan.NewCreate(body, o.Source)
	if r.planning.serverDryRun && r.dryRunnable(o, &ev) {
		created, err := r.writeItem(ctx, client, o, it, "", dryRunAll)
		if err != nil {
			return it, ev, fmt.Errorf("creating (server dry run): %w", conciseServerError(err))
		}
		it.DryRunResult, ev.Result = created.Object, created
	}
	return it, ev, nil
}

// planPatch is the three-way merge of the object into live, as patch
// makes it, with each changed field's owners.
func (r *runner) planPatch(ctx context.Context, client dynamic.ResourceInterface, o *object, live *unstructured.Unstructured) (plan.Item, Event, error) {
	mp, warnings, err := r.plan(o, live)
	ev := o.event(Event{Live: live, Plan: mp, Warnings: warnings})
	if err != nil {
		return plan.Item{}, ev, err
	}
	owners, err := ownership.Owners(live)
	if err != nil {
		return plan.Item{}, ev, err
	}
	it := plan.FromMerge(o.Obj, live, o.Source, mp, owners)
	switch {
	case mp.Empty():
		ev.Outcome, ev.Result = Unchanged, live
		return it, ev, nil
	case !r.planning.serverDryRun:
		ev.Outcome, ev.Result = Configured, &unstructured.Unstructured{Object: mp.Merged}
		return it, ev, nil
	}
	patched, err := r.writeItem(ctx, client, o, it, "", dryRunAll)
	if err != nil {
		return it, ev, fmt.Errorf("patching (server dry run): %w", conciseServerError(err))
	}
	it.DryRunResult = patched.Object
	ev.Outcome, ev.Result = writeOutcome(live, patched, true, hasStatus(o)), patched
	return it, ev, nil
}

// planServerSide is the server-side apply item of the object: the apply
// configuration serverSideApply sends, without the last-applied record, as
// its server dry run sends it (under kubectl's manager the server rewrites
// an existing record itself; under another, or for a Secret, none is
// kept). The extra requests by which Apply shares the record's ownership
// with kubectl are not part of a plan.
func (r *runner) planServerSide(ctx context.Context, client dynamic.ResourceInterface, o *object, live *unstructured.Unstructured) (plan.Item, Event, error) {
	body, warnings, err := r.serverSideBody(o, live)
	ev := o.event(Event{Live: live, Warnings: warnings})
	if err != nil {
		return plan.Item{}, ev, err
	}
	body = withoutRecord(body)
	it, err := plan.NewServerSide(body, live, o.Source)
	if err != nil {
		return it, ev, err
	}
	ev.Outcome, ev.Result = Configured, body
	if live == nil {
		ev.Outcome = Created
	}
	if r.opts.localServerSide && !r.planning.serverDryRun {
		return it, ev, r.planLocalServerSide(o, live, body, &it, &ev)
	}
	if !r.planning.serverDryRun || !r.dryRunnable(o, &ev) {
		return it, ev, nil
	}
	applied, err := r.writeItem(ctx, client, o, it, "", dryRunAll)
	if err != nil {
		return it, ev, explainConflicts(o, live, err)
	}
	it.DryRunResult = applied.Object
	if it.Changes, err = serverSideChanges(body, live, applied); err != nil {
		return it, ev, err
	}
	ev.Outcome, ev.Result = writeOutcome(live, applied, true, false), applied
	return it, ev, nil
}

// hasStatus tells whether the file sets status, which then counts in
// telling configured from unchanged.
func hasStatus(o *object) bool {
	_, ok := o.Obj.Object["status"]
	return ok
}

// dryRunnable tells whether the server can dry-run a write of o: not when
// its kind is one the run's own CRDs define and the server does not serve
// yet (planned by the file's CRD; see crdIndex). The event says so then.
func (r *runner) dryRunnable(o *object, ev *Event) bool {
	gvk := o.Obj.GroupVersionKind()
	_, fromRun := r.crds[gvk.GroupKind()]
	if _, served := r.mappings.Load(gvk); served || !fromRun {
		return true
	}
	ev.Warnings = append(ev.Warnings, fmt.Sprintf("%s: no server dry run: the server does not serve %s yet (its CRD is in the files)", o.Ref(), gvk.Kind))
	return false
}
