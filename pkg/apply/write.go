package apply

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/kapply/kapply/pkg/cluster"
	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/plan"
)

// resource is the client for the object's resource and namespace.
func (r *runner) resource(o *object) dynamic.ResourceInterface {
	client := r.dynamic.Resource(o.Mapping.Resource)
	if namespaced(o) {
		return client.Namespace(o.Obj.GetNamespace())
	}
	return client
}

// createOrUpdate finds the live object (listed, or read now), creates the
// object when it is missing and merges the file into it otherwise.
func (r *runner) createOrUpdate(ctx context.Context, o *object, lives *liveIndex) Event {
	client := r.resource(o)
	live, exists, listed := lives.take(o)
	if !listed {
		var err error
		live, err = r.get(ctx, client, o)
		if err != nil && !apierrors.IsNotFound(err) {
			return o.event(Event{Outcome: Failed, Err: fmt.Errorf("reading live object: %w", err)})
		}
		exists = err == nil
	}
	if err := r.keyObject(ctx, o); err != nil {
		return o.event(Event{Outcome: Failed, Err: err})
	}
	if err := r.fileFromLive(o, live, exists); err != nil {
		return o.event(Event{Outcome: Failed, Err: err})
	}
	switch {
	case r.planning != nil && !exists:
		return r.planOne(ctx, client, o, nil)
	case r.planning != nil:
		return r.planOne(ctx, client, o, live)
	case r.opts.ServerSide && r.opts.Subresource != "":
		if !exists {
			live = nil
		}
		return r.applySubresource(ctx, client, o, live)
	case r.opts.ServerSide && r.opts.DryRun == cluster.ClientDryRun && !exists:
		return r.localServerSideApply(o, nil)
	case r.opts.ServerSide && r.opts.DryRun == cluster.ClientDryRun:
		return r.localServerSideApply(o, live)
	case r.opts.ServerSide && !exists:
		return r.serverSideApply(ctx, client, o, nil)
	case r.opts.ServerSide:
		return r.serverSideApply(ctx, client, o, live)
	case !exists:
		return r.create(ctx, client, o)
	}
	return r.update(ctx, client, o, live)
}

func (r *runner) get(ctx context.Context, client dynamic.ResourceInterface, o *object) (*unstructured.Unstructured, error) {
	var live *unstructured.Unstructured
	err := r.retryTransient(ctx, func() error {
		var err error
		live, err = client.Get(ctx, o.Obj.GetName(), metav1.GetOptions{})
		return err
	})
	return live, err
}

// create sends the object with its last-applied record, as kubectl does.
func (r *runner) create(ctx context.Context, client dynamic.ResourceInterface, o *object) Event {
	body, warnings, err := r.withLastApplied(o, nil)
	if err != nil {
		return o.event(Event{Outcome: Failed, Err: err})
	}
	// kubectl drops nulls before creating, after recording them, so that the
	// created object is what a patch with the same record would give.
	pruneNulls(body.Object)
	if r.opts.DryRun == cluster.ClientDryRun {
		return o.event(Event{Outcome: Created, Result: body, Warnings: warnings})
	}
	created, err := r.writeItem(ctx, client, o, plan.Item{Action: plan.Create, Merged: body.Object}, "", r.serverDryRun())
	if apierrors.IsAlreadyExists(err) {
		// Someone created it since it was read: merge into theirs.
		live, getErr := r.get(ctx, client, o)
		if getErr == nil {
			return r.update(ctx, client, o, live)
		}
		err = fmt.Errorf("%w; reading it then: %w", err, getErr)
	}
	if err != nil {
		return o.event(Event{Outcome: Failed, Err: fmt.Errorf("creating: %w", conciseServerError(err)), Warnings: warnings})
	}
	return o.event(Event{Outcome: Created, Result: created, Warnings: warnings})
}

// serverDryRun is the dryRun request option for the run.
func (r *runner) serverDryRun() []string {
	return r.opts.DryRun.Param()
}

// withLastApplied returns the object carrying its last-applied record, and a
// warning when the record had to be compacted to fit the annotation limit.
// live (nil before a create) lends a redacted record its salt.
func (r *runner) withLastApplied(o *object, live *unstructured.Unstructured) (*unstructured.Unstructured, []string, error) {
	a, warnings, err := r.attachRecord(o, live, false)
	return a.Obj, warnings, err
}

// attachRecord is withLastApplied, giving what lastapplied.LastApplied needs;
// shared: see lastapplied.Recording.Shared.
func (r *runner) attachRecord(o *object, live *unstructured.Unstructured, shared bool) (lastapplied.Attached, []string, error) {
	a, err := lastapplied.AttachRecord(o.Obj, lastapplied.Recording{Secrets: r.opts.SecretRecord, Live: live, Shared: shared, Key: o.key})
	if err != nil || !a.Compacted {
		return a, nil, err
	}
	return a, []string{fmt.Sprintf("%s: the last-applied configuration would pass the API server's %d-byte annotation limit; "+
		"kapply keeps it packed (gzip) in %s instead; kubectl apply will not see it",
		o.Ref(), lastapplied.AnnotationLimit, lastapplied.CompactAnnotation)}, nil
}

// pruneNulls removes null map values at any depth.
func pruneNulls(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, item := range v {
			if item == nil {
				delete(v, k)
			} else {
				pruneNulls(item)
			}
		}
	case []any:
		for _, item := range v {
			pruneNulls(item)
		}
	}
}
