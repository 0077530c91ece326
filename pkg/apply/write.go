package apply

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/kapply/kapply/pkg/lastapplied"
)

// resource is the client for the object's resource and namespace.
func (r *runner) resource(o *Object) dynamic.ResourceInterface {
	client := r.dynamic.Resource(o.Mapping.Resource)
	if namespaced(o) {
		return client.Namespace(o.Obj.GetNamespace())
	}
	return client
}

// createOrUpdate reads the live object, creates the object when it is
// missing and merges the file into it otherwise.
func (r *runner) createOrUpdate(ctx context.Context, o *Object) Event {
	client := r.resource(o)
	live, err := client.Get(ctx, o.Obj.GetName(), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return r.create(ctx, client, o)
	case err != nil:
		return Event{Object: o, Outcome: Failed, Err: fmt.Errorf("reading live object: %w", err)}
	default:
		return r.update(ctx, client, o, live)
	}
}

// create sends the object with its last-applied record, as kubectl does.
func (r *runner) create(ctx context.Context, client dynamic.ResourceInterface, o *Object) Event {
	body, err := withLastApplied(o.Obj)
	if err != nil {
		return Event{Object: o, Outcome: Failed, Err: err}
	}
	created, err := client.Create(ctx, body, metav1.CreateOptions{FieldManager: r.opts.FieldManager})
	if err != nil {
		return Event{Object: o, Outcome: Failed, Err: fmt.Errorf("creating: %w", err)}
	}
	return Event{Object: o, Outcome: Created, Result: created}
}

func withLastApplied(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	record, err := lastapplied.Encode(obj)
	if err != nil {
		return nil, err
	}
	return lastapplied.WithRecord(obj, record), nil
}
