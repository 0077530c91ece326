package merge

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/kapply/kapply/pkg/schema"
)

// builtin is a built-in kind under test: our schema (from the server's
// OpenAPI v3 documents in testdata/openapi when present, else derived by
// hand-written reflection over the Go types) and the oracle's patch meta
// (from the Go struct tags, an independent source).
type builtin struct {
	name string
	kind *schema.Kind
	meta strategicpatch.LookupPatchMeta
	// fromOpenAPI says where kind came from, for test logs.
	fromOpenAPI bool
}

type builtinSpec struct {
	name string
	gvk  k8sschema.GroupVersionKind
	doc  string
	obj  any
}

var builtinSpecs = []builtinSpec{
	{"Deployment", appsv1.SchemeGroupVersion.WithKind("Deployment"), "apis__apps__v1.json", appsv1.Deployment{}},
	{"DaemonSet", appsv1.SchemeGroupVersion.WithKind("DaemonSet"), "apis__apps__v1.json", appsv1.DaemonSet{}},
	{"StatefulSet", appsv1.SchemeGroupVersion.WithKind("StatefulSet"), "apis__apps__v1.json", appsv1.StatefulSet{}},
	{"Job", batchv1.SchemeGroupVersion.WithKind("Job"), "apis__batch__v1.json", batchv1.Job{}},
	{"Pod", corev1.SchemeGroupVersion.WithKind("Pod"), "api__v1.json", corev1.Pod{}},
	{"Service", corev1.SchemeGroupVersion.WithKind("Service"), "api__v1.json", corev1.Service{}},
	{"ConfigMap", corev1.SchemeGroupVersion.WithKind("ConfigMap"), "api__v1.json", corev1.ConfigMap{}},
}

// loadBuiltins is computed once per test binary; tests only read it.
var loadBuiltins = sync.OnceValues(func() (map[string]*builtin, error) {
	out := map[string]*builtin{}
	docs := map[string]*schema.Document{}
	for _, s := range builtinSpecs {
		meta, err := strategicpatch.NewPatchMetaFromStruct(s.obj)
		if err != nil {
			return nil, err
		}
		b := &builtin{name: s.name, meta: meta}
		b.kind, b.fromOpenAPI, err = openAPIKind(docs, s)
		if err != nil {
			return nil, err
		}
		if b.kind == nil {
			b.kind = reflectKind(s.obj)
		}
		out[s.name] = b
	}
	return out, nil
})

func builtins(t testing.TB) map[string]*builtin {
	t.Helper()
	bs, err := loadBuiltins()
	if err != nil {
		t.Fatalf("loading built-in schemas: %v", err)
	}
	return bs
}

// openAPIKind reads the kind from testdata/openapi; (nil, false, nil) when
// the document is not there yet.
func openAPIKind(docs map[string]*schema.Document, s builtinSpec) (*schema.Kind, bool, error) {
	doc, ok := docs[s.doc]
	if !ok {
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "openapi", s.doc))
		if errors.Is(err, os.ErrNotExist) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		if doc, err = schema.ParseOpenAPIV3(data); err != nil {
			return nil, false, err
		}
		docs[s.doc] = doc
	}
	k, err := doc.Kind(s.gvk)
	return k, err == nil, err
}

// reflectKind derives a schema from Go struct tags, standing in for the
// OpenAPI documents until they exist. Container and service ports get their
// x-kubernetes-list-map-keys by hand.
func reflectKind(obj any) *schema.Kind {
	b := &reflector{types: map[reflect.Type]*schema.Node{}}
	return &schema.Kind{Root: b.node(reflect.TypeOf(obj)), Strategic: true}
}

type reflector struct {
	types map[reflect.Type]*schema.Node
}

var marshaler = reflect.TypeFor[json.Marshaler]()

func (r *reflector) node(t reflect.Type) *schema.Node {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n, ok := r.types[t]; ok {
		return n
	}
	switch {
	case t.Name() == "RawExtension":
		return nil
	case t.Implements(marshaler) || reflect.PointerTo(t).Implements(marshaler):
		return &schema.Node{Type: schema.Scalar}
	}
	switch t.Kind() {
	case reflect.Struct:
		n := &schema.Node{Type: schema.Object, Fields: map[string]*schema.Node{}}
		r.types[t] = n
		r.fields(n, t)
		return n
	case reflect.Map:
		return &schema.Node{Type: schema.Object, Elem: r.node(t.Elem())}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return &schema.Node{Type: schema.Scalar}
		}
		return &schema.Node{Type: schema.List, Elem: r.node(t.Elem())}
	case reflect.Interface:
		return nil
	}
	return &schema.Node{Type: schema.Scalar}
}

func (r *reflector) fields(n *schema.Node, t reflect.Type) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" && f.Anonymous {
			r.fields(n, f.Type)
			continue
		}
		n.Fields[name] = r.field(f)
	}
}

// field applies the field's patch tags to a copy of its type's node.
func (r *reflector) field(f reflect.StructField) *schema.Node {
	base := r.node(f.Type)
	strategy := f.Tag.Get("patchStrategy")
	if base == nil || strategy == "" {
		return base
	}
	n := *base
	if strings.Contains(strategy, "retainKeys") && n.Type == schema.Object {
		n.RetainKeys = true
	}
	if n.Type == schema.List && strings.Contains(strategy, "merge") {
		elem := *n.Elem
		elem.RetainKeys = strings.Contains(strategy, "retainKeys")
		n.Elem = &elem
		n.List = schema.Set
		if key := f.Tag.Get("patchMergeKey"); key != "" {
			n.List, n.Keys = schema.Map, []string{key}
			n.IdentityKeys = identityByHand(f.Type.Elem().Name())
		}
	}
	return &n
}

func identityByHand(elem string) []string {
	switch elem {
	case "ContainerPort":
		return []string{"containerPort", "protocol"}
	case "ServicePort":
		return []string{"port", "protocol"}
	}
	return nil
}
