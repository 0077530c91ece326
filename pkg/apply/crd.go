package apply

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
)

// awaitCRDs waits, bounded by the run's timeout, until every CRD the phase
// applied whose custom resources the run also applies is Established, so
// those can follow. A CRD that does not get there turns its event into a
// failure. CRDs without custom resources in the run are not waited for: an
// install manifest of large CRDs (prometheus-operator's take the server
// seconds each on a busy machine) is done when the server has them, as with
// kubectl.
func (r *runner) awaitCRDs(ctx context.Context, objects []*object, indexes []int, events []Event) {
	used := kindsUsed(objects)
	for _, i := range indexes {
		if events[i].Outcome == Failed {
			continue
		}
		r.crdsApplied = true
		if !used[definedKind(objects[i])] {
			continue
		}
		if err := r.awaitEstablished(ctx, objects[i]); err != nil {
			events[i] = objects[i].event(Event{Outcome: Failed, Err: errorOf(objects[i], err)})
		}
	}
	if r.crdsApplied {
		r.resetMapper()
	}
}

// kindsUsed is the set of group-kinds of the run's objects.
func kindsUsed(objects []*object) map[k8sschema.GroupKind]bool {
	used := make(map[k8sschema.GroupKind]bool, len(objects))
	for _, o := range objects {
		used[o.Obj.GroupVersionKind().GroupKind()] = true
	}
	return used
}

// definedKind is the group-kind a CRD in a file defines.
func definedKind(o *object) k8sschema.GroupKind {
	group, _, _ := unstructured.NestedString(o.Obj.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(o.Obj.Object, "spec", "names", "kind")
	return k8sschema.GroupKind{Group: group, Kind: kind}
}

func (r *runner) awaitEstablished(ctx context.Context, o *object) error {
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
