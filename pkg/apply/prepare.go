package apply

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kapply/kapply/pkg/cluster"
)

var (
	namespaceGK = schema.GroupKind{Kind: "Namespace"}
	crdGK       = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}
)

// ErrNoName reports an object without metadata.name (generateName is not
// supported by apply, as in kubectl).
var ErrNoName = errors.New("metadata.name is missing")

// prepare checks the object's name, maps it to its API resource and settles
// its namespace.
func (r *runner) prepare(ctx context.Context, o *object) error {
	if o.Obj.GetName() == "" {
		return ErrNoName
	}
	mapping, err := r.mapObject(ctx, o)
	if err != nil {
		return err
	}
	o.Mapping = mapping
	return r.settleNamespace(o)
}

// mapObject finds the object's API resource. A kind the server does not
// serve yet may belong to a CRD this run just established, whose discovery
// lags a moment behind: the mapper is reset and asked again until Timeout.
func (r *runner) mapObject(ctx context.Context, o *object) (*meta.RESTMapping, error) {
	gvk := o.Obj.GroupVersionKind()
	if mapping, ok := r.mappings.Load(gvk); ok {
		return mapping.(*meta.RESTMapping), nil
	}
	var mapping *meta.RESTMapping
	err := r.retryTransient(ctx, func() error {
		var err error
		mapping, err = r.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		return err
	})
	if err == nil {
		r.mappings.Store(gvk, mapping)
	}
	if !meta.IsNoMatchError(err) {
		return mapping, err
	}
	if fromRun, ok := r.crds.mapping(gvk); ok && r.opts.DryRun != cluster.NoDryRun {
		return fromRun, nil
	}
	poll := func(context.Context) (bool, error) {
		r.resetMapper()
		mapping, err = r.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		return !meta.IsNoMatchError(err), nil
	}
	if waitErr := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, r.discoveryWait(), true, poll); waitErr != nil {
		return nil, fmt.Errorf("unknown kind %q in version %q: %w", gvk.Kind, gvk.GroupVersion(), err)
	}
	return mapping, err
}

// discoveryWait is how long an unknown kind is looked up again; short unless
// the run has CRDs that might serve it.
func (r *runner) discoveryWait() time.Duration {
	if r.crdsApplied {
		return r.timeout()
	}
	return time.Millisecond
}

func (r *runner) timeout() time.Duration { return r.opts.Timeout }

// settleNamespace gives a namespaced object the default namespace when it
// names none, refuses a contradiction with an explicit -n as kubectl does,
// and drops the namespace of cluster-scoped objects (kustomize's namespace:
// adds one to kinds it does not know): the server ignores it, so kept in the
// record it would make every apply "configured", and prune would not
// recognize the live object as the file's.
func (r *runner) settleNamespace(o *object) error {
	if !namespaced(o) {
		o.Obj.SetNamespace("")
		return nil
	}
	ns := o.Obj.GetNamespace()
	switch {
	case ns == "":
		o.Obj.SetNamespace(r.opts.Namespace)
	case r.opts.EnforceNamespace && ns != r.opts.Namespace:
		// kubectl's words (cli-runtime's visitor), which scripts match.
		return fmt.Errorf("the namespace from the provided object %q does not match the namespace %q. You must pass 'WriteOptions.Namespace=%s' to perform this operation.", ns, r.opts.Namespace, ns)
	}
	return nil
}

func namespaced(o *object) bool {
	return o.Mapping.Scope.Name() == meta.RESTScopeNameNamespace
}
