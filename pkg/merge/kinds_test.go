package merge

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/kapply/kapply/pkg/schema"
)

// openAPIDir holds the OpenAPI v3 documents of kube-apiserver v1.37.1, one
// gzipped file per group-version (see its README.md).
const openAPIDir = "../../testdata/openapi"

// builtin is a kind the server serves: our schema, from its group-version's
// document in openAPIDir, and the oracle's patch meta, from the Go struct
// tags of k8s.io/api (an independent source). A kind without a Go type
// (meta nil) is patched with a JSON merge patch, by kubectl as by kapply.
type builtin struct {
	name string
	gvk  k8sschema.GroupVersionKind
	kind *schema.Kind
	meta strategicpatch.LookupPatchMeta
	// lenient is meta extended where the Go type cannot answer (see
	// lenientMeta); the oracle falls back to it when kubectl fails.
	lenient strategicpatch.LookupPatchMeta
}

// kindSet is every kind of every document, in a stable order, and an index
// by name: "group/version/Kind" always, and the bare Kind when only one
// group-version serves it ("Deployment", "Pod").
type kindSet struct {
	all    []*builtin
	byName map[string]*builtin
}

// goTypes knows the Go type of every kind the server serves from Go types:
// client-go's kinds and the CRD kind, as pkg/apply decides "strategic merge
// patch or JSON merge patch".
func goTypes() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// loadBuiltins is computed once per test binary; tests only read it.
var loadBuiltins = sync.OnceValues(func() (*kindSet, error) {
	types, err := goTypes()
	if err != nil {
		return nil, fmt.Errorf("building the scheme: %w", err)
	}
	files, err := filepath.Glob(filepath.Join(openAPIDir, "*.json.gz"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no documents in %s (%v)", openAPIDir, err)
	}
	set := &kindSet{byName: map[string]*builtin{}}
	for _, file := range files {
		kinds, err := documentKinds(file, types)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", file, err)
		}
		set.all = append(set.all, kinds...)
	}
	set.index()
	return set, nil
})

// documentKinds builds the kinds a document declares for its own
// group-version.
func documentKinds(file string, types *runtime.Scheme) ([]*builtin, error) {
	gv := groupVersionOf(filepath.Base(file))
	doc, err := readDocument(file)
	if err != nil {
		return nil, err
	}
	var out []*builtin
	for _, gvk := range doc.GVKs() {
		if gvk.GroupVersion() != gv {
			continue
		}
		b, err := newBuiltin(doc, gvk, types)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", gvk, err)
		}
		out = append(out, b)
	}
	return out, nil
}

func newBuiltin(doc *schema.Document, gvk k8sschema.GroupVersionKind, types *runtime.Scheme) (*builtin, error) {
	b := &builtin{name: gvkName(gvk), gvk: gvk}
	if !types.Recognizes(gvk) {
		kind, err := doc.CustomKind(gvk)
		b.kind = kind
		return b, err
	}
	obj, err := types.New(gvk)
	if err != nil {
		return nil, err
	}
	if b.meta, err = strategicpatch.NewPatchMetaFromStruct(obj); err != nil {
		return nil, err
	}
	b.lenient = lenientMeta{t: reflect.TypeOf(obj)}
	b.kind, err = doc.Kind(gvk)
	return b, err
}

// groupVersionOf reads a document's group-version from its file name,
// "apis__apps__v1.json.gz" or "api__v1.json.gz".
func groupVersionOf(name string) k8sschema.GroupVersion {
	parts := strings.Split(strings.TrimSuffix(name, ".json.gz"), "__")
	if len(parts) == 2 {
		return k8sschema.GroupVersion{Version: parts[1]}
	}
	return k8sschema.GroupVersion{Group: parts[1], Version: parts[2]}
}

func gvkName(gvk k8sschema.GroupVersionKind) string {
	return gvk.Group + "/" + gvk.Version + "/" + gvk.Kind
}

// readDocument parses a gzipped document.
func readDocument(file string) (*schema.Document, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, err
	}
	return schema.ParseOpenAPIV3(raw)
}

func (s *kindSet) index() {
	slices.SortFunc(s.all, func(a, b *builtin) int { return strings.Compare(a.name, b.name) })
	count := map[string]int{}
	for _, b := range s.all {
		count[b.gvk.Kind]++
	}
	for _, b := range s.all {
		s.byName[b.name] = b
		if count[b.gvk.Kind] == 1 {
			s.byName[b.gvk.Kind] = b
		}
	}
}

func allKinds(t testing.TB) *kindSet {
	t.Helper()
	set, err := loadBuiltins()
	if err != nil {
		t.Fatalf("loading the served kinds: %v", err)
	}
	return set
}

// builtins indexes the served kinds by name; see kindSet.
func builtins(t testing.TB) map[string]*builtin {
	t.Helper()
	return allKinds(t).byName
}
