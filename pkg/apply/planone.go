package apply

import (
	"cmp"
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sigsjson "sigs.k8s.io/json"

	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/ownership"
	"github.com/kapply/kapply/pkg/plan"
	"github.com/kapply/kapply/pkg/secretmask"
)

// dryRunAll is the dryRun of the server dry runs a plan sends, whatever
// the run's own mode (a client dry run, so nothing else writes).
var dryRunAll = []string{metav1.DryRunAll}

// planObject is the one computation of what to write: the item of one
// prepared object against live (nil: absent) — a create, a patch,
// unchanged, or a server-side apply (to the object or to a subresource)
// — and the event a client dry run gives. Applier.Plan hands the item
// out; Applier.Apply executes it at once (executePlanned). Nothing is
// sent but what the local server-side apply reads.
func (r *runner) planObject(o *object, live *unstructured.Unstructured) (plan.Item, Event, error) {
	it, ev, err := r.planUnkeyed(o, live)
	// A Secret's item carries its namespace's digest key (its record's
	// digest made under it).
	it = it.KeyedBy(o.key, live)
	if err == nil {
		item := it
		ev.Item = &item
	}
	return it, ev, err
}

// planUnkeyed is planObject before the item gets its digest key.
func (r *runner) planUnkeyed(o *object, live *unstructured.Unstructured) (plan.Item, Event, error) {
	switch {
	case r.opts.ServerSide && r.opts.Subresource != "":
		return r.planSubresource(o, live)
	case r.opts.ServerSide:
		return r.planServerSide(o, live)
	case live == nil:
		return r.planCreate(o)
	}
	return r.planPatch(o, live)
}

// planCreate is the create item of the object, sent as kubectl creates
// it: with its record, without nulls (dropped after recording them, so
// the created object is what a patch with the same record would give).
func (r *runner) planCreate(o *object) (plan.Item, Event, error) {
	return r.planCreateSalted(o, nil)
}

// planCreateSalted is planCreate with saltFrom (nil: none) lending a
// redacted Secret record its salt, as live does a patch's: Execute re-plans
// a create with the plan's own object, so that the same file gives the
// same record (see replan).
func (r *runner) planCreateSalted(o *object, saltFrom *unstructured.Unstructured) (plan.Item, Event, error) {
	body, warnings, err := r.withLastApplied(o, saltFrom)
	ev := o.event(Event{Outcome: Created, Result: body, Warnings: warnings})
	if err != nil {
		return plan.Item{}, ev, err
	}
	pruneNulls(body.Object)
	return plan.NewCreate(body, o.Source), ev, nil
}

// planPatch is the three-way merge of the object into live, with each
// changed field's owners.
func (r *runner) planPatch(o *object, live *unstructured.Unstructured) (plan.Item, Event, error) {
	mp, warnings, err := r.threeWay(o, live)
	ev := o.event(Event{Live: live, Warnings: warnings})
	if err != nil {
		return plan.Item{}, ev, err
	}
	owners, err := ownership.Owners(live)
	if err != nil {
		return plan.Item{}, ev, err
	}
	it := plan.FromMerge(o.Obj, live, o.Source, mp, owners)
	if mp.Empty() {
		// Nothing is sent, in a server dry run too: what the server
		// defaults or admits was done when live was written. A field the
		// server rewrites differs from the file in the next plan, which is
		// then not empty and goes to the server.
		ev.Outcome, ev.Result = Unchanged, live
		return it, ev, nil
	}
	ev.Outcome, ev.Result = Configured, &unstructured.Unstructured{Object: mp.Merged}
	return it, ev, nil
}

// planServerSide is the server-side apply item of the object: the file
// with its last-applied record as kubectl --server-side keeps it. Under
// kubectl's manager the server rewrites an existing record itself, so
// the patch leaves it out and the item shares it (plan.Item.ShareRecord,
// see applyAsKubectl) — unless only a packed record fits, which the
// patch carries; under another manager, or for a Secret whose record is
// redacted, the patch carries none. An object last written by
// client-side apply has its owners upgraded first (executeApply).
func (r *runner) planServerSide(o *object, live *unstructured.Unstructured) (plan.Item, Event, error) {
	body, warnings, err := r.serverSideBody(o, live)
	ev := o.event(Event{Live: live, Warnings: warnings})
	if err != nil {
		return plan.Item{}, ev, err
	}
	share := r.recordAsKubectl(body) && !r.redactsSecretRecord(o)
	sent := body
	if share || r.serverSideManager() != ServerSideFieldManager || r.redactsSecretRecord(o) {
		sent = withoutRecord(body)
	}
	it, err := plan.NewServerSide(sent, live, o.Source)
	if err != nil {
		return it, ev, err
	}
	it.ShareRecord = share
	ev.Outcome, ev.Result = Configured, sent
	if live == nil {
		ev.Outcome = Created
	}
	if r.opts.localServerSide {
		return it, ev, r.planLocalServerSide(o, live, sent, &it, &ev)
	}
	return it, ev, nil
}

// planSubresource is the apply item of kubectl apply --server-side
// --subresource: the file as it is, sent to the subresource; no record
// and no ownership upgrade, which concern the object itself. The object
// must exist; the server answers NotFound otherwise.
func (r *runner) planSubresource(o *object, live *unstructured.Unstructured) (plan.Item, Event, error) {
	ev := o.event(Event{Live: live, Outcome: Configured, Result: o.Obj})
	it, err := plan.NewServerSide(o.Obj, live, o.Source)
	it.Subresource = r.opts.Subresource
	return it, ev, err
}

// recordAsKubectl reports whether the run keeps the record of a
// server-side apply as kubectl does: under kubectl's manager, for a record
// that fits uncompacted (the server knows only that one).
func (r *runner) recordAsKubectl(body *unstructured.Unstructured) bool {
	_, fits := body.GetAnnotations()[lastapplied.Annotation]
	return fits && r.serverSideManager() == ServerSideFieldManager
}

// redactsSecretRecord reports a Secret whose record is to be redacted,
// applied under kubectl's manager: the API server rewrites the record of
// every object such a patch applies, from the patch, values in clear. Its
// patch carries no record then, and so drops the one client-side apply
// wrote (kubectl's manager owns it once upgraded).
func (r *runner) redactsSecretRecord(o *object) bool {
	return r.serverSideManager() == ServerSideFieldManager && r.opts.SecretRecord == lastapplied.RedactSecrets &&
		secretmask.IsSecret(o.Obj.Object)
}

// dryRunItem sends the item as a server dry run (PlanOptions.ServerDryRun)
// and completes it and its event with the server's answer.
func (r *runner) dryRunItem(ctx context.Context, o *object, it *plan.Item, ev *Event) error {
	if it.Action == plan.Unchanged || !r.dryRunnable(o, ev) {
		return nil
	}
	live := ev.Live
	if live != nil && it.Action == plan.Create {
		live = nil
	}
	// An apply sends the patch alone, as kubectl diff --server-side does:
	// the record requests of ShareRecord would not build on a dry run.
	written, err := r.writeItem(ctx, r.resource(o), o, *it, "", dryRunAll)
	switch {
	case err != nil && it.Action == plan.Apply:
		return explainConflicts(o, live, err)
	case err != nil:
		return fmt.Errorf("%s (server dry run): %w", verbOf(it.Action), conciseServerError(err))
	}
	it.DryRunResult = written.Object
	if it.Action == plan.Apply && it.Subresource == "" {
		body, err := applyBody(*it)
		if err != nil {
			return err
		}
		if it.Changes, err = serverSideChanges(body, live, written); err != nil {
			return err
		}
		it.ChangesKnown = true
	}
	ev.Result = written
	item := *it
	ev.Item = &item
	switch it.Action {
	case plan.Update:
		ev.Outcome = writeOutcome(live, written, true, hasStatus(o))
	case plan.Apply:
		ev.Outcome = writeOutcome(live, written, true, it.Subresource != "")
	}
	return nil
}

// applyBody is an apply item's patch as an object.
func applyBody(it plan.Item) (*unstructured.Unstructured, error) {
	body := &unstructured.Unstructured{}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(it.Patch.Data, &body.Object); err != nil {
		return nil, fmt.Errorf("decoding the apply patch: %w", err)
	}
	return body, nil
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

// serverSideManager is the field manager of the run's server-side applies:
// the caller's, or kubectl's. Execute runs with the plan's manager, empty
// when the plan took kubectl's (managerOf chooses per item), and its
// check plans each item again: it must choose as the plan did.
func (r *runner) serverSideManager() string {
	return cmp.Or(r.opts.FieldManager, ServerSideFieldManager)
}
