package apply

import (
	"context"
	"errors"
	"fmt"
	"maps"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/kapply/kapply/pkg/cluster"
	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/merge"
	kplan "github.com/kapply/kapply/pkg/plan"
)

// maxConflictRetries bounds how often an object is read again and re-planned
// after the server reports a concurrent write (409).
const maxConflictRetries = 5

// update plans the three-way merge of the object against the live one and
// sends the patch, unless nothing changes. A 409 from a concurrent writer is
// answered by reading the object again and planning again — unless the file
// sets metadata.resourceVersion: the patch carries it, as kubectl's does, so
// a stale file gets the server's conflict instead of overwriting newer state,
// and planning again cannot help.
func (r *runner) update(ctx context.Context, client dynamic.ResourceInterface, o *object, live *unstructured.Unstructured) Event {
	for attempt := 0; ; attempt++ {
		ev, err := r.patch(ctx, client, o, live)
		retry := apierrors.IsConflict(err) && attempt < maxConflictRetries
		stale := apierrors.IsConflict(err) && o.Obj.GetResourceVersion() != ""
		switch {
		case err == nil:
			return ev
		case (stale || !retry) && r.forceReplaces(err):
			ev := r.replace(ctx, client, o, live, err)
			// The original's values, in live only, mask a denied restore's
			// error that quotes them.
			ev.Live = live
			return ev
		case stale:
			ev.Outcome, ev.Err = Failed, staleFileError(o, live, err)
			return ev
		case !retry:
			ev.Outcome, ev.Err = Failed, err
			return ev
		}
		if live, err = r.get(ctx, client, o); err != nil {
			return o.event(Event{Outcome: Failed, Err: fmt.Errorf("reading live object again after a conflict: %w", err)})
		}
		if err := r.fileFromLive(o, live, true); err != nil {
			return o.event(Event{Outcome: Failed, Err: err})
		}
	}
}

// staleFileError says why the server refused the patch of a file that sets
// metadata.resourceVersion.
func staleFileError(o *object, live *unstructured.Unstructured, err error) error {
	return fmt.Errorf("%w (the file sets metadata.resourceVersion %q; the object was at %q when read: remove the field, or write the file again from the live object)",
		err, o.Obj.GetResourceVersion(), live.GetResourceVersion())
}

// patch plans and sends one patch.
func (r *runner) patch(ctx context.Context, client dynamic.ResourceInterface, o *object, live *unstructured.Unstructured) (Event, error) {
	ev := o.event(Event{Live: live})
	plan, warnings, err := r.plan(o, live)
	ev.Warnings, ev.Plan = warnings, plan
	if err != nil {
		return ev, err
	}
	switch {
	case plan.Empty():
		// Nothing is sent, in a server dry run (diff) too: apply sends no
		// request for an empty plan, so nothing of the object would change,
		// and what the server defaults or admits was done when live was
		// written. Server-side differences that matter still show: a field
		// the server rewrites (defaulting, a webhook) differs from the file
		// in the next plan, which is then not empty and goes to the server.
		ev.Outcome, ev.Result = Unchanged, live
		return ev, nil
	case r.opts.DryRun == cluster.ClientDryRun:
		ev.Outcome, ev.Result = Configured, &unstructured.Unstructured{Object: plan.Merged}
		return ev, nil
	}
	// Sent as Execute sends a planned patch, without a precondition: a
	// conflict is answered by planning again (see update).
	item := kplan.Item{Action: kplan.Update, Patch: kplan.Patch{Type: kplan.PatchTypeOf(plan.Patch.Type), Data: plan.Patch.Data}}
	patched, err := r.writeItem(ctx, client, o, item, "", r.serverDryRun())
	if err != nil {
		return ev, fmt.Errorf("patching: %w", conciseServerError(err))
	}
	ev.Outcome, ev.Result = r.patchedOutcome(o, live, patched), patched
	return ev, nil
}

// patchedOutcome tells whether a sent patch changed the object (see
// writeOutcome); status counts only when the file sets it.
func (r *runner) patchedOutcome(o *object, live, patched *unstructured.Unstructured) Outcome {
	_, setsStatus := o.Obj.Object["status"]
	return writeOutcome(live, patched, r.opts.DryRun == cluster.ServerDryRun, setsStatus)
}

// writeOutcome tells created, configured and unchanged apart after a write.
// A write can change nothing: a patch that re-sends what the server
// defaults or drops (minReadySeconds: 0, an empty map, a protocol the server
// fills into an atomic list, stringData already folded into data), or a
// server-side apply of what is live. The server then stores nothing and
// keeps the resourceVersion, so the object is unchanged — where kubectl says
// configured. When the resourceVersion did move, a controller may have
// written in between (a new CRD's status), so the returned object is
// compared with live, leaving out what no write of ours sets, by the
// engine's equality (the one the plan was made with); a dry run never
// moves the resourceVersion and is always compared.
func writeOutcome(live, written *unstructured.Unstructured, dryRun, withStatus bool) Outcome {
	switch {
	case live == nil:
		return Created
	case !dryRun && live.GetResourceVersion() == written.GetResourceVersion():
		return Unchanged
	case fieldpath.Equal(storedContent(live, withStatus), storedContent(written, withStatus)):
		return Unchanged
	}
	return Configured
}

// plan runs the engine on (last-applied, file with its new record, live).
func (r *runner) plan(o *object, live *unstructured.Unstructured) (*merge.Plan, []string, error) {
	var warnings []string
	// The record is attached first: when live's is the same, it need not
	// be decoded (see lastapplied.Attached.LastApplied). The file with its
	// record is only read (the merge copies what it keeps): shared.
	attached, compactWarnings, attachErr := r.attachRecord(o, live, true)
	last, err := attached.LastApplied(live)
	switch {
	case errors.Is(err, lastapplied.ErrCompactCorrupt):
		warnings = append(warnings, fmt.Sprintf("%s: %v; treating it as absent, so no field is deleted on a guess", o.Ref(), err))
	case errors.Is(err, lastapplied.ErrMalformed):
		return nil, nil, malformedRecordError(o, err)
	case err != nil:
		return nil, nil, err
	case last == nil && lastapplied.HasRecord(live):
		warnings = append(warnings, fmt.Sprintf("%s has an empty or null %s annotation; it is patched and gets a record now, as kubectl does", o.Ref(), lastapplied.Annotation))
	case last == nil:
		warnings = append(warnings, fmt.Sprintf("%s has no %s annotation; it is patched and gets one now, as kubectl does", o.Ref(), lastapplied.Annotation))
	}
	if attachErr != nil {
		return nil, warnings, attachErr
	}
	file := attached.Obj
	warnings = append(warnings, compactWarnings...)
	lastapplied.DropStale(file, live)
	kind, err := r.schemas.Kind(o.Obj.GroupVersionKind())
	if err != nil {
		return nil, warnings, err
	}
	plan, err := merge.ThreeWay(last, file.Object, live.Object, kind)
	if err != nil {
		return nil, warnings, err
	}
	if r.opts.NoOverwrite {
		if err := refuseConflicts(kind, last, file.Object, live, plan, o.key); err != nil {
			return nil, warnings, err
		}
	}
	for _, w := range plan.Warnings {
		warnings = append(warnings, fmt.Sprintf("%s: %s", o.Ref(), w))
	}
	if w := shadowedCompactWarning(o, live, file.Object, kind, plan); w != "" {
		warnings = append(warnings, w)
	}
	return plan, warnings, nil
}

// storedContent is the object without what says when and by whom it was
// written (resourceVersion, managedFields) and, unless the file sets it,
// without status, which controllers write.
func storedContent(u *unstructured.Unstructured, withStatus bool) map[string]any {
	out := maps.Clone(u.Object)
	if !withStatus {
		delete(out, "status")
	}
	if metadata, ok := out["metadata"].(map[string]any); ok {
		metadata = maps.Clone(metadata)
		delete(metadata, "managedFields")
		delete(metadata, "resourceVersion")
		out["metadata"] = metadata
	}
	return out
}
