package apply

import (
	"context"
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kapply/kapply/pkg/cluster"
)

// The writes of a run go through the Lists client when it has one
// (cluster.RawPatch, RawCreate, RawDelete: the dynamic client's requests,
// each answer decoded once), else (KAPPLY_RAWWRITE=off, or a caller's
// Clients without Lists) through the dynamic client.

// sendPatch is client.Patch of o (client is r.resource(o)).
func (r *runner) sendPatch(ctx context.Context, client dynamic.ResourceInterface, o *object, pt types.PatchType, data []byte, opts metav1.PatchOptions) (*unstructured.Unstructured, error) {
	if r.lists == nil {
		return client.Patch(ctx, o.Obj.GetName(), pt, data, opts)
	}
	return cluster.RawPatch(ctx, r.lists, targetOf(o), pt, data, opts)
}

// sendCreate is client.Create of body, the object o with its record.
func (r *runner) sendCreate(ctx context.Context, client dynamic.ResourceInterface, o *object, body *unstructured.Unstructured, opts metav1.CreateOptions) (*unstructured.Unstructured, error) {
	data, err := json.Marshal(body.Object)
	if r.lists == nil || err != nil {
		return client.Create(ctx, body, opts) // the client's error, if any
	}
	return cluster.RawCreate(ctx, r.lists, targetOf(o), data, opts)
}

// sendDelete is client.Delete of o, returning the UID of the object the
// server deleted ("" when unknown: without the raw client, whose answer
// the dynamic client drops).
func (r *runner) sendDelete(ctx context.Context, client dynamic.ResourceInterface, o *object, opts metav1.DeleteOptions) (types.UID, error) {
	if r.lists == nil {
		opts.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "DeleteOptions"} // as the dynamic client sends them
		return "", client.Delete(ctx, o.Obj.GetName(), opts)
	}
	return cluster.RawDelete(ctx, r.lists, targetOf(o), opts)
}

// targetOf is where the dynamic client of r.resource(o) sends o's
// requests.
func targetOf(o *object) cluster.Target {
	t := cluster.Target{Resource: o.Mapping.Resource, Name: o.Obj.GetName()}
	if namespaced(o) {
		t.Namespace = o.Obj.GetNamespace()
	}
	return t
}
