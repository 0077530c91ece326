package apply

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/kapply/kapply/pkg/lastapplied"
)

// resource is the client for the object's resource and namespace.
func (r *runner) resource(o *object) dynamic.ResourceInterface {
	client := r.dynamic.Resource(o.Mapping.Resource)
	if namespaced(o) {
		return client.Namespace(o.Obj.GetNamespace())
	}
	return client
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
