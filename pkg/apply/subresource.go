package apply

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kapply/kapply/pkg/cluster"
)

// applySubresource sends the file as an apply patch to one subresource of
// the object (WriteOptions.Subresource, "status" for one), as kubectl apply
// --server-side --subresource does: the file as it is, no last-applied
// record and no ownership upgrade, which concern the object itself. The
// object must exist; the server answers NotFound otherwise.
func (r *runner) applySubresource(ctx context.Context, client dynamic.ResourceInterface, o *object, live *unstructured.Unstructured) Event {
	data, err := o.Obj.MarshalJSON()
	if err != nil {
		return o.event(Event{Outcome: Failed, Err: fmt.Errorf("encoding the apply patch: %w", err)})
	}
	force := r.opts.ForceConflicts
	opts := metav1.PatchOptions{FieldManager: r.opts.FieldManager, Force: &force, DryRun: r.serverDryRun(), FieldValidation: r.opts.FieldValidation}
	var applied *unstructured.Unstructured
	err = r.retryTransient(ctx, func() error {
		applied, err = client.Patch(ctx, o.Obj.GetName(), types.ApplyPatchType, data, opts, r.opts.Subresource)
		return err
	})
	if err != nil {
		return o.event(Event{Outcome: Failed, Err: explainConflicts(o, live, err)})
	}
	return o.event(Event{Outcome: writeOutcome(live, applied, r.opts.DryRun == cluster.ServerDryRun, true), Result: applied, Live: live})
}
