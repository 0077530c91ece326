package apply

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
)

// awaitCRDs waits, bounded by the run's timeout, until every CRD the phase
// applied is Established, so custom resources of the same run can follow.
// A CRD that does not get there turns its event into a failure.
func (r *runner) awaitCRDs(ctx context.Context, objects []*Object, indexes []int, events []Event) {
	for _, i := range indexes {
		if events[i].Outcome == Failed {
			continue
		}
		r.crdsApplied = true
		if err := r.awaitEstablished(ctx, objects[i]); err != nil {
			events[i] = Event{Object: objects[i], Outcome: Failed, Err: objectError(objects[i], err)}
		}
	}
	if r.crdsApplied {
		meta.MaybeResetRESTMapper(r.mapper)
	}
}

func (r *runner) awaitEstablished(ctx context.Context, o *Object) error {
	client := r.dynamic.Resource(o.Mapping.Resource)
	var lastErr error
	poll := func(ctx context.Context) (bool, error) {
		crd, err := client.Get(ctx, o.Obj.GetName(), metav1.GetOptions{})
		if err != nil {
			lastErr = err
			return false, nil
		}
		return isEstablished(crd), nil
	}
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, r.timeout(), true, poll); err != nil {
		if lastErr != nil && !apierrors.IsNotFound(lastErr) {
			err = lastErr
		}
		return fmt.Errorf("waiting for the CRD to be established: %w", err)
	}
	return nil
}

func isEstablished(crd *unstructured.Unstructured) bool {
	conditions, _, err := unstructured.NestedSlice(crd.Object, "status", "conditions")
	if err != nil {
		return false
	}
	for _, c := range conditions {
		cond, ok := c.(map[string]any)
		if ok && cond["type"] == "Established" && cond["status"] == "True" {
			return true
		}
	}
	return false
}
