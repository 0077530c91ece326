package apply

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kapply/kapply/pkg/cluster"
)

// A run's deletes go through the Lists client when it has one
// (cluster.RawDelete: the dynamic client's request, whose answer names the
// UID of the object deleted), else (KAPPLY_RAWLIST=off, or a caller's
// Clients without Lists) through the dynamic client. Creates and patches
// always go through the dynamic client.

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
