package merge

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/kapply/kapply/pkg/schema"
)

// builtin is a built-in kind under test: our schema, from the OpenAPI v3
// documents of kube-apiserver v1.37.1 in testdata/openapi, and the oracle's
// patch meta, from the Go struct tags of k8s.io/api (an independent source).
type builtin struct {
	name string
	kind *schema.Kind
	meta strategicpatch.LookupPatchMeta
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
		kind, err := openAPIKind(docs, s)
		if err != nil {
			return nil, fmt.Errorf("reading %s from %s: %w", s.name, s.doc, err)
		}
		out[s.name] = &builtin{name: s.name, kind: kind, meta: meta}
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

// openAPIKind reads the kind from testdata/openapi, parsing each document
// once.
func openAPIKind(docs map[string]*schema.Document, s builtinSpec) (*schema.Kind, error) {
	doc, ok := docs[s.doc]
	if !ok {
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "openapi", s.doc))
		if err != nil {
			return nil, err
		}
		if doc, err = schema.ParseOpenAPIV3(data); err != nil {
			return nil, err
		}
		docs[s.doc] = doc
	}
	return doc.Kind(s.gvk)
}
