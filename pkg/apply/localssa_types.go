package apply

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/spec3"

	"github.com/kapply/kapply/pkg/schema"
)

// ssaTypes builds, once per group-version and run, the structured-merge-diff
// type converters with which server-side apply is computed locally: from
// the server's OpenAPI v3 document of the group-version (the one pkg/schema
// reads for the three-way merge), as the API server builds its own from the
// same models. A failure is not kept, so the next object tries again.
type ssaTypes struct {
	source schema.Source

	mu   sync.Mutex
	byGV map[k8sschema.GroupVersion]*ssaTypesEntry
}

type ssaTypesEntry struct {
	done      chan struct{}
	converter managedfields.TypeConverter
	err       error
}

func newSSATypes(source schema.Source) *ssaTypes {
	return &ssaTypes{source: source, byGV: map[k8sschema.GroupVersion]*ssaTypesEntry{}}
}

// errNoSchema: the server publishes no schema of the kind.
var errNoSchema = errors.New("the server publishes no OpenAPI schema of the kind")

// converter is the type converter of gvk's document; errNoSchema when the
// server has none or its document does not declare the kind.
func (t *ssaTypes) converter(gvk k8sschema.GroupVersionKind) (managedfields.TypeConverter, error) {
	gv := gvk.GroupVersion()
	t.mu.Lock()
	e, ok := t.byGV[gv]
	if !ok {
		e = &ssaTypesEntry{done: make(chan struct{})}
		t.byGV[gv] = e
	}
	t.mu.Unlock()
	if ok {
		<-e.done
	} else {
		e.converter, e.err = t.build(gv)
		if e.err != nil {
			t.mu.Lock()
			delete(t.byGV, gv)
			t.mu.Unlock()
		}
		close(e.done)
	}
	if e.err != nil {
		return nil, e.err
	}
	if !declares(e.converter, gvk) {
		return nil, errNoSchema
	}
	return e.converter, nil
}

func (t *ssaTypes) build(gv k8sschema.GroupVersion) (managedfields.TypeConverter, error) {
	if t.source == nil {
		return nil, errNoSchema
	}
	data, err := t.source.OpenAPIV3(gv)
	if errors.Is(err, schema.ErrNotFound) {
		return nil, errNoSchema
	}
	if err != nil {
		return nil, err
	}
	var doc spec3.OpenAPI
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("decoding the OpenAPI v3 document of %s: %w", gv, err)
	}
	if doc.Components == nil {
		return nil, errNoSchema
	}
	// preserveUnknownFields false, as the API server: a custom resource's
	// schema marks where unknown fields stay (x-kubernetes-preserve-unknown-fields).
	converter, err := managedfields.NewTypeConverter(doc.Components.Schemas, false)
	if err != nil {
		return nil, fmt.Errorf("building the structured-merge-diff types of %s: %w", gv, err)
	}
	return converter, nil
}

// declares tells whether the converter knows gvk: converting an empty
// object of the kind fails when no model carries its
// x-kubernetes-group-version-kind.
func declares(c managedfields.TypeConverter, gvk k8sschema.GroupVersionKind) bool {
	probe := &unstructured.Unstructured{}
	probe.SetGroupVersionKind(gvk)
	_, err := c.ObjectToTyped(probe)
	return err == nil
}

// sameVersion converts nothing: a local apply reads and writes one
// version (the file's, which the live object was read in), so the API
// server's conversions to and from its hub version are the identity here.
type sameVersion struct{}

func (sameVersion) Convert(in, out, _ any) error {
	u, ok := in.(*unstructured.Unstructured)
	o, okOut := out.(*unstructured.Unstructured)
	if !ok || !okOut {
		return fmt.Errorf("local server-side apply converts unstructured objects only, not %T", in)
	}
	o.Object = runtime.DeepCopyJSON(u.Object)
	return nil
}

func (sameVersion) ConvertToVersion(in runtime.Object, _ runtime.GroupVersioner) (runtime.Object, error) {
	return in, nil
}

func (sameVersion) ConvertFieldLabel(_ k8sschema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

// noDefaults stands for the API server's defaulting, which only the server
// knows (built-in defaults are compiled into it): a locally computed
// result lacks the defaults the server would add.
type noDefaults struct{}

func (noDefaults) Default(runtime.Object) {}

// emptyObjects makes the empty object of a kind that an apply creating
// the object starts from, as the API server's creater does.
type emptyObjects struct{}

func (emptyObjects) New(gvk k8sschema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(gvk)
	return u, nil
}
