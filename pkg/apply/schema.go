package apply

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

// builtinScheme knows every kind the API server serves from Go types and so
// patches with a strategic merge patch: client-go's kinds and the CRD kind.
// Recognizing a kind this way is kubectl's test for "strategic merge patch or
// JSON merge patch".
func builtinScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{scheme.AddToScheme, apiextensionsv1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, fmt.Errorf("building the scheme of built-in kinds: %w", err)
		}
	}
	return s, nil
}

// crdIndex holds the run's CRDs by the group-kind they define.
type crdIndex map[k8sschema.GroupKind]*apiextensionsv1.CustomResourceDefinition

// indexCRDs reads the run's CRDs and tells the resolver about them, so their
// custom resources merge by the CRD's schema even before the server serves
// it. It returns, by object index, the CRDs it could not read (their custom
// resources then use the server's schema).
func (r *runner) indexCRDs(objects []*object) map[int]error {
	crds, errs := crdsOf(objects)
	for _, crd := range crds {
		r.schemas.AddCRD(crd)
	}
	r.crds = crds
	return errs
}

// crdsOf are the CRDs among objects, by the group-kind they define, and
// by object index those that could not be read.
func crdsOf(objects []*object) (crdIndex, map[int]error) {
	crds := crdIndex{}
	errs := map[int]error{}
	for i, o := range objects {
		if o.Obj.GroupVersionKind().GroupKind() != crdGK {
			continue
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Obj.Object, crd); err != nil {
			errs[i] = fmt.Errorf("reading the CRD's schema from the file: %w", err)
			continue
		}
		crds[k8sschema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}] = crd
	}
	return crds, errs
}

// mapping maps a kind defined by one of the run's CRDs without asking the
// server; used in dry runs, where those CRDs are never created.
func (c crdIndex) mapping(gvk k8sschema.GroupVersionKind) (*meta.RESTMapping, bool) {
	crd, ok := c[gvk.GroupKind()]
	if !ok {
		return nil, false
	}
	scope := meta.RESTScopeNamespace
	if crd.Spec.Scope == apiextensionsv1.ClusterScoped {
		scope = meta.RESTScopeRoot
	}
	return &meta.RESTMapping{
		Resource:         gvk.GroupVersion().WithResource(crd.Spec.Names.Plural),
		GroupVersionKind: gvk,
		Scope:            scope,
	}, true
}
