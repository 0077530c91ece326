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

	"github.com/kapply/kapply/pkg/cluster"
	"github.com/kapply/kapply/pkg/delete"
	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/plan"
)

// sendItem is the one writer: it writes one item of a plan, whoever made
// the plan (a saved plan's Execute, or Apply's plan of the same call).
// live is the object the item was planned or verified against (nil:
// absent) and rv the resourceVersion the write requires ("" for none, as
// Apply sends it: a conflict is answered by a new plan). A create
// fails if the object exists, a patch or apply if rv moved, a removal if
// the UID or rv did. ev is the item's event so far (its object, live, the
// plan's warnings); the error, if any, is the write's, explained, for the
// caller's conflict policy (executePlanned, executeItem).
func (r *runner) sendItem(ctx context.Context, o *object, it plan.Item, live *unstructured.Unstructured, rv string, ev Event) (Event, error) {
	client := r.resource(o)
	var written *unstructured.Unstructured
	var err error
	switch it.Action {
	case plan.Unchanged:
		ev.Outcome, ev.Result = Unchanged, live
		return ev, nil
	case plan.Apply:
		var warnings []string
		written, live, warnings, err = r.sendApplyItem(ctx, client, o, it, live, rv)
		ev.Warnings = append(ev.Warnings, warnings...)
	case plan.Create:
		if written, err = r.writeItem(ctx, client, o, it, rv, r.serverDryRun()); err != nil {
			err = fmt.Errorf("creating: %w", conciseServerError(err))
		}
	case plan.Update:
		if written, err = r.writeItem(ctx, client, o, it, rv, r.serverDryRun()); err != nil {
			err = fmt.Errorf("patching: %w", conciseServerError(err))
		}
	case plan.Prune, plan.Delete:
		return r.sendRemoval(ctx, client, o, it, live, rv)
	default:
		err = fmt.Errorf("unknown action %q", it.Action)
	}
	if err != nil {
		return ev, err
	}
	ev.Outcome, ev.Result = writeOutcome(live, written, r.opts.DryRun == cluster.ServerDryRun, writesStatus(it)), written
	return ev, nil
}

// sendApplyItem sends a server-side apply item. Sent to the object, an
// object last written by client-side apply first has its managedFields
// upgraded (client-go's csaupgrade, as kubectl does), so fields the file
// drops from now on are deleted rather than left to the old client-side
// manager; the apply then requires the upgraded resourceVersion (when rv
// is set). It returns the object written and live as the apply found it.
func (r *runner) sendApplyItem(ctx context.Context, client dynamic.ResourceInterface, o *object, it plan.Item, live *unstructured.Unstructured, rv string) (*unstructured.Unstructured, *unstructured.Unstructured, []string, error) {
	manager := r.managerOf(it)
	if live != nil && it.Subresource == "" {
		if err := r.upgradeConflicts(ctx, client, o, live, it.Patch.Data, manager); err != nil {
			return nil, live, nil, explainConflicts(o, live, err)
		}
		if r.opts.DryRun != cluster.ServerDryRun {
			upgraded, err := r.upgradeOnce(ctx, client, o, live, manager)
			if err != nil {
				return nil, live, nil, &upgradeError{err}
			}
			if live = upgraded; rv != "" {
				rv = live.GetResourceVersion()
			}
		}
	}
	var applied *unstructured.Unstructured
	var warnings []string
	var err error
	if it.ShareRecord && r.opts.DryRun == cluster.NoDryRun {
		applied, err = r.applyAsKubectl(ctx, client, o, it, live, rv)
	} else {
		applied, err = r.writeItem(ctx, client, o, it, rv, r.serverDryRun())
	}
	if err != nil {
		return nil, live, nil, explainConflicts(o, live, err)
	}
	if manager == ServerSideFieldManager && r.opts.SecretRecord == lastapplied.RedactSecrets && it.ID.Group == "" && it.ID.Kind == "Secret" {
		warnings = secretRecordWarning(o, applied)
	}
	return applied, live, warnings, nil
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

// writeItem sends a create, patch or apply item — sendItem's write and
// Plan's server dry run — and returns the server's answer: a patch
// carrying rv as its precondition (none when rv is empty), with dryRun,
// under the run's field manager (kubectl's for the kind of write when
// unset), with its field validation and, for an apply, --force-conflicts,
// to the item's subresource if it names one.
func (r *runner) writeItem(ctx context.Context, client dynamic.ResourceInterface, o *object, it plan.Item, rv string, dryRun []string) (*unstructured.Unstructured, error) {
	var written *unstructured.Unstructured
	if it.Action == plan.Create {
		body := &unstructured.Unstructured{Object: it.Merged}
		opts := metav1.CreateOptions{FieldManager: r.managerOf(it), DryRun: dryRun, FieldValidation: r.opts.FieldValidation}
		err := r.retryTransient(ctx, func() error {
			var err error
			written, err = client.Create(ctx, body, opts)
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
		if it.Subresource != "" {
			written, err = client.Patch(ctx, it.ID.Name, patch.Type.K8s(), patch.Data, opts, it.Subresource)
		} else {
			written, err = client.Patch(ctx, o.Obj.GetName(), patch.Type.K8s(), patch.Data, opts)
		}
		return err
	})
	return written, refusedDryRun(o.Obj, dryRun, err)
}

// sendRemoval deletes the item's object if it is still the one planned
// (UID and resourceVersion as preconditions); the error is the delete's.
func (r *runner) sendRemoval(ctx context.Context, client dynamic.ResourceInterface, o *object, it plan.Item, live *unstructured.Unstructured, rv string) (Event, error) {
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
		return o.event(Event{Live: live}), fmt.Errorf("deleting: %w", conciseServerError(err))
	}
	return o.event(Event{Outcome: outcome, Result: live, Live: live}), nil
}

// refusal is a saved plan's answer to a failed write of an item (the
// policy of executeItem). A conflict (or, for a create, an object
// that exists) means the object changed between the check and the
// write: it is read again to name what changed, and the item is not
// planned again. A server-side apply's conflict over fields other
// managers own is explained (explainConflicts) as it is.
func (r *runner) refusal(ctx context.Context, client dynamic.ResourceInterface, o *object, it plan.Item, err error) error {
	var status apierrors.APIStatus
	switch {
	case it.Action == plan.Apply && apierrors.IsConflict(err) && errors.As(err, &status) &&
		status.Status().Details != nil && len(status.Status().Details.Causes) > 0:
		return err
	case !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err):
		return err
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
	// The server's words, without the verb sendItem put before them.
	if inner := errors.Unwrap(err); inner != nil {
		err = inner
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
