package apply

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/merge"
)

// maxConflictRetries bounds how often an object is read again and re-planned
// after the server reports a concurrent write (409).
const maxConflictRetries = 5

// update plans the three-way merge of the object against the live one and
// sends the patch, unless nothing changes. A 409 from a concurrent writer is
// answered by reading the object again and planning again.
func (r *runner) update(ctx context.Context, client dynamic.ResourceInterface, o *Object, live *unstructured.Unstructured) Event {
	for attempt := 0; ; attempt++ {
		ev, err := r.patch(ctx, client, o, live)
		if err == nil || !apierrors.IsConflict(err) || attempt == maxConflictRetries {
			if err != nil {
				ev.Outcome, ev.Err = Failed, err
			}
			return ev
		}
		if live, err = r.get(ctx, client, o); err != nil {
			return Event{Object: o, Outcome: Failed, Err: fmt.Errorf("reading live object again after a conflict: %w", err)}
		}
	}
}

// patch plans and sends one patch.
func (r *runner) patch(ctx context.Context, client dynamic.ResourceInterface, o *Object, live *unstructured.Unstructured) (Event, error) {
	ev := Event{Object: o, Live: live}
	plan, warnings, err := r.plan(o, live)
	ev.Warnings, ev.Plan = warnings, plan
	if err != nil {
		return ev, err
	}
	switch {
	case plan.Empty():
		ev.Outcome, ev.Result = Unchanged, live
		return ev, nil
	case r.opts.DryRun == ClientDryRun:
		ev.Outcome, ev.Result = Configured, &unstructured.Unstructured{Object: plan.Merged}
		return ev, nil
	}
	var patched *unstructured.Unstructured
	err = r.retryTransient(ctx, func() error {
		patched, err = client.Patch(ctx, o.Obj.GetName(), plan.Patch.Type, plan.Patch.Data,
			metav1.PatchOptions{FieldManager: r.opts.FieldManager, DryRun: r.serverDryRun()})
		return err
	})
	if err != nil {
		return ev, fmt.Errorf("patching: %w", err)
	}
	ev.Outcome, ev.Result = Configured, patched
	return ev, nil
}

// plan runs the engine on (last-applied, file with its new record, live).
func (r *runner) plan(o *Object, live *unstructured.Unstructured) (*merge.Plan, []string, error) {
	var warnings []string
	last, err := lastapplied.Read(live)
	switch {
	case errors.Is(err, lastapplied.ErrMalformed):
		warnings = append(warnings, fmt.Sprintf("%s: %v; treating it as absent, so no field is deleted on a guess", o.Ref(), err))
	case err != nil:
		return nil, nil, err
	case last == nil:
		warnings = append(warnings, fmt.Sprintf("%s has no %s annotation; it is patched and gets one now, as kubectl does", o.Ref(), lastapplied.Annotation))
	}
	file, compactWarnings, err := withLastApplied(o)
	if err != nil {
		return nil, warnings, err
	}
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
	for _, w := range plan.Warnings {
		warnings = append(warnings, fmt.Sprintf("%s: %s", o.Ref(), w))
	}
	return plan, warnings, nil
}
