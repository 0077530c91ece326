package apply

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	sigsjson "sigs.k8s.io/json"

	"github.com/kapply/kapply/pkg/delete"
	"github.com/kapply/kapply/pkg/plan"
)

// sendItem writes one verified item of a plan: live is the object it was
// verified against (nil: absent) and rv the resourceVersion the write
// requires (see plan.Item.Verify). A create fails if the object exists,
// a patch or apply if rv moved, a removal if the UID or rv did.
func (r *runner) sendItem(ctx context.Context, o *object, it plan.Item, live *unstructured.Unstructured, rv string) Event {
	client := r.resource(o)
	ev := o.event(Event{Live: live})
	var written *unstructured.Unstructured
	var err error
	switch it.Action {
	case plan.Unchanged:
		ev.Outcome, ev.Result = Unchanged, live
		return ev
	case plan.Apply:
		if live != nil {
			if live, err = r.upgradeOnce(ctx, client, o, live, r.managerOf(it)); err != nil {
				break
			}
			rv = live.GetResourceVersion()
		}
		written, err = r.writeItem(ctx, client, o, it, rv, r.serverDryRun())
	case plan.Create, plan.Update:
		written, err = r.writeItem(ctx, client, o, it, rv, r.serverDryRun())
	case plan.Prune, plan.Delete:
		return r.sendRemoval(ctx, client, o, it, live, rv)
	default:
		err = fmt.Errorf("unknown action %q", it.Action)
	}
	if err != nil {
		ev.Outcome, ev.Err = Failed, r.refusal(ctx, client, o, it, err)
		return ev
	}
	ev.Outcome, ev.Result = writeOutcome(live, written, false, it.Action == plan.Update && patchSetsStatus(it.Patch)), written
	return ev
}

// managerOf is the field manager of the item's write: the caller's, or
// kubectl's for its kind of apply.
func (r *runner) managerOf(it plan.Item) string {
	switch {
	case r.opts.FieldManager != "":
		return r.opts.FieldManager
	case it.Action == plan.Apply:
		return ServerSideFieldManager
	}
	return ClientSideFieldManager
}

// writeItem sends a create, patch or apply item — Execute's write of a
// verified item, Apply's of the object it just planned and Plan's server
// dry run — and returns the server's answer: a patch carrying rv as its
// precondition (none when rv is empty, as Apply sends it), with dryRun, under the
// run's field manager (kubectl's for the kind of write when unset), with
// its field validation and, for an apply, --force-conflicts.
func (r *runner) writeItem(ctx context.Context, client dynamic.ResourceInterface, o *object, it plan.Item, rv string, dryRun []string) (*unstructured.Unstructured, error) {
	var written *unstructured.Unstructured
	if it.Action == plan.Create {
		body := &unstructured.Unstructured{Object: it.Merged}
		opts := metav1.CreateOptions{FieldManager: r.managerOf(it), DryRun: dryRun, FieldValidation: r.opts.FieldValidation}
		err := r.retryTransient(ctx, func() error {
			var err error
			written, err = r.sendCreate(ctx, client, o, body, opts)
			return err
		})
		return written, refusedDryRun(o.Obj, dryRun, err)
	}
	patch, err := it.Patch.WithResourceVersion(rv)
	if err != nil {
		return nil, err
	}
	opts := metav1.PatchOptions{FieldManager: r.managerOf(it), DryRun: dryRun, FieldValidation: r.opts.FieldValidation}
	if it.Action == plan.Apply {
		force := r.opts.ForceConflicts
		opts.Force = &force
	}
	err = r.retryTransient(ctx, func() error {
		written, err = r.sendPatch(ctx, client, o, patch.Type.K8s(), patch.Data, opts)
		return err
	})
	return written, refusedDryRun(o.Obj, dryRun, err)
}

// sendRemoval deletes the item's object if it is still the one planned
// (UID and resourceVersion as preconditions).
func (r *runner) sendRemoval(ctx context.Context, client dynamic.ResourceInterface, o *object, it plan.Item, live *unstructured.Unstructured, rv string) Event {
	outcome := Deleted
	if it.Action == plan.Prune {
		outcome = Pruned
	}
	// As Apply's removal events: the object is the live one deleted.
	o.Obj = live
	opts := delete.Request{Cascade: r.opts.Cascade, UID: types.UID(it.UID), ResourceVersion: rv, DryRun: r.opts.DryRun}.Options()
	err := r.retryTransient(ctx, func() error { return client.Delete(ctx, it.ID.Name, opts) })
	if delete.GoneAlready(err, answerWasLost(err), outcome == Pruned) {
		err = nil // what the item wants
	}
	if err != nil {
		return o.event(Event{Outcome: Failed, Err: r.refusal(ctx, client, o, it, err), Live: live})
	}
	return o.event(Event{Outcome: outcome, Result: live, Live: live})
}

// refusal explains a failed write of an item. A conflict (or, for a
// create, an object that exists) means the object changed between the
// check and the write: it is read again to name what changed, and the
// item is not planned again. A server-side apply's conflict over fields
// other managers own is explained as Apply does.
func (r *runner) refusal(ctx context.Context, client dynamic.ResourceInterface, o *object, it plan.Item, err error) error {
	var status apierrors.APIStatus
	switch {
	case it.Action == plan.Apply && apierrors.IsConflict(err) && errors.As(err, &status) &&
		status.Status().Details != nil && len(status.Status().Details.Causes) > 0:
		return explainConflicts(o, nil, err)
	case !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err):
		return fmt.Errorf("%s: %w", verbOf(it.Action), conciseServerError(err))
	}
	live, getErr := r.get(ctx, client, o)
	if apierrors.IsNotFound(getErr) {
		live, getErr = nil, nil
	}
	if getErr == nil {
		if _, changed := it.Verify(live); changed != nil {
			return changed
		}
	}
	return &plan.ChangedError{ID: it.ID, What: fmt.Sprintf("it changed while being written: %v", conciseServerError(err))}
}

var verbs = map[plan.Action]string{plan.Create: "creating", plan.Update: "patching", plan.Apply: "applying server-side",
	plan.Prune: "deleting", plan.Delete: "deleting"}

func verbOf(a plan.Action) string { return verbs[a] }

// patchSetsStatus tells whether a patch writes status, which then counts
// in telling configured from unchanged, as when the file sets it.
func patchSetsStatus(p plan.Patch) bool {
	var body map[string]any
	if sigsjson.UnmarshalCaseSensitivePreserveInts(p.Data, &body) != nil {
		return false
	}
	_, ok := body["status"]
	return ok
}

// upgradeOnce moves the fields client-side apply owns on live (verified,
// so its resourceVersion is the one required) to manager, as
// serverSideApply does before its patch: one attempt, the patch testing
// the resourceVersion first; a conflict is a change since the check. live
// is returned when there is nothing to move; the apply then requires the
// resourceVersion of the object returned.
func (r *runner) upgradeOnce(ctx context.Context, client dynamic.ResourceInterface, o *object, live *unstructured.Unstructured, manager string) (*unstructured.Unstructured, error) {
	patch, err := r.upgradePatch(o, live, manager)
	if err != nil || patch == nil {
		return live, err
	}
	var upgraded *unstructured.Unstructured
	err = r.retryTransient(ctx, func() error {
		upgraded, err = client.Patch(ctx, live.GetName(), types.JSONPatchType, patch, metav1.PatchOptions{})
		return err
	})
	return upgraded, err
}
