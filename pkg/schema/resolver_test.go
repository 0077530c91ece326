package schema

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// fakeSource serves fixed documents and counts fetches.
type fakeSource struct {
	docs    map[schema.GroupVersion]string
	fail    error
	fetches atomic.Int32
}

func (f *fakeSource) OpenAPIV3(gv schema.GroupVersion) ([]byte, error) {
	f.fetches.Add(1)
	if f.fail != nil {
		return nil, f.fail
	}
	doc, ok := f.docs[gv]
	if !ok {
		return nil, fmt.Errorf("group-version %s: %w", gv, ErrNotFound)
	}
	return []byte(doc), nil
}

func widgetSource() *fakeSource {
	return &fakeSource{docs: map[schema.GroupVersion]string{widgetGVK.GroupVersion(): widgetDoc}}
}

func builtinGroup(group string) func(schema.GroupVersionKind) bool {
	return func(gvk schema.GroupVersionKind) bool { return gvk.Group == group }
}

func TestResolverFetchesEachGroupVersionOnce(t *testing.T) {
	src := widgetSource()
	r := NewResolver(ResolverConfig{Source: src, IsBuiltin: builtinGroup("test.io")})
	var wg sync.WaitGroup
	kinds := make([]*Kind, 16)
	errs := make([]error, 16)
	for i := range kinds {
		wg.Go(func() { kinds[i], errs[i] = r.Kind(widgetGVK) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for _, k := range kinds[1:] {
		if k != kinds[0] {
			t.Fatal("concurrent Kind calls: want one shared result")
		}
	}
	if n := src.fetches.Load(); n != 1 {
		t.Errorf("fetches: got %d, want 1", n)
	}
	if !kinds[0].Strategic || at(t, kinds[0].Root, "spec.tolerations").List != Atomic {
		t.Error("a built-in kind: want the strategic reading")
	}
}

func TestResolverCustomReading(t *testing.T) {
	r := NewResolver(ResolverConfig{Source: widgetSource()})
	kind, err := r.Kind(widgetGVK)
	if err != nil {
		t.Fatal(err)
	}
	if kind.Strategic || at(t, kind.Root, "spec.tolerations").List != Map {
		t.Error("a custom kind from the server: want the list-type reading")
	}
}

func TestResolverUnknownKinds(t *testing.T) {
	r := NewResolver(ResolverConfig{Source: widgetSource()})
	for _, gvk := range []schema.GroupVersionKind{
		{Group: "test.io", Version: "v1", Kind: "Gadget"},  // document without the kind
		{Group: "other.io", Version: "v1", Kind: "Gadget"}, // no document
	} {
		kind, err := r.Kind(gvk)
		if err != nil || kind.Known() {
			t.Errorf("%s: got %+v, %v; want an unknown kind and no error", gvk, kind, err)
		}
	}
	kind, err := NewResolver(ResolverConfig{}).Kind(widgetGVK)
	if err != nil || kind.Known() {
		t.Errorf("no source: got %+v, %v; want an unknown kind", kind, err)
	}
}

// TestResolverSourceError: a failed fetch is reported with its context and
// not kept: the next call fetches again, and gets the document once the
// source answers.
func TestResolverSourceError(t *testing.T) {
	src := widgetSource()
	src.fail = errors.New("connection refused")
	r := NewResolver(ResolverConfig{Source: src})
	for range 2 {
		_, err := r.Kind(widgetGVK)
		if err == nil || !strings.Contains(err.Error(), "fetching OpenAPI v3 document of test.io/v1: connection refused") {
			t.Errorf("got %v, want the fetch error with context", err)
		}
	}
	if n := src.fetches.Load(); n != 2 {
		t.Errorf("fetches after a failure: got %d, want 2 (a failure is not kept)", n)
	}
	src.fail = nil
	kind, err := r.Kind(widgetGVK)
	if err != nil || !kind.Known() {
		t.Fatalf("once the source answers: got %+v, %v; want the server's schema", kind, err)
	}
	if _, err := r.Kind(widgetGVK); err != nil || src.fetches.Load() != 3 {
		t.Errorf("after a success: got %v and %d fetches; want the kept answer (3 fetches)", err, src.fetches.Load())
	}
}

// TestResolverServerCRD: a custom kind no document describes takes the
// server's CRD; a built-in kind never asks for one, and a kind without a
// CRD stays unknown.
func TestResolverServerCRD(t *testing.T) {
	var asked []schema.GroupVersionKind
	r := NewResolver(ResolverConfig{Source: widgetSource(), IsBuiltin: builtinGroup("k8s.io"),
		ServerCRD: func(gvk schema.GroupVersionKind) (*apiextensionsv1.CustomResourceDefinition, error) {
			asked = append(asked, gvk)
			if gvk != crdGVK {
				return nil, &NotFoundError{GVK: gvk}
			}
			return loadCRD(t, widgetCRD), nil
		}})
	kind, err := r.Kind(crdGVK)
	if err != nil {
		t.Fatal(err)
	}
	checkWant(t, kind.Root, want{path: "spec.byName", typ: List, list: Map, keys: []string{"name"}})
	for _, gvk := range []schema.GroupVersionKind{{Group: "k8s.io", Version: "v1", Kind: "Thing"}, {Group: "other.io", Version: "v1", Kind: "Gadget"}} {
		if kind, err := r.Kind(gvk); err != nil || kind.Known() {
			t.Errorf("%s: got %+v, %v; want an unknown kind", gvk, kind, err)
		}
	}
	if _, err := r.Kind(widgetGVK); err != nil {
		t.Fatal(err)
	}
	want := []schema.GroupVersionKind{crdGVK, {Group: "other.io", Version: "v1", Kind: "Gadget"}}
	if !slices.Equal(asked, want) {
		t.Errorf("CRDs asked for: got %v, want %v (none for a built-in kind or one the documents describe)", asked, want)
	}
}

// TestMemoForgetsErrors: a failed computation is not kept; the next
// caller computes again, and a success is kept.
func TestMemoForgetsErrors(t *testing.T) {
	var m memo[string, int]
	var calls atomic.Int32
	compute := func() (int, error) {
		if calls.Add(1) == 1 {
			return 0, errors.New("503")
		}
		return 7, nil
	}
	if _, err := m.get("k", compute); err == nil {
		t.Fatal("first computation: want its error")
	}
	for range 2 {
		if v, err := m.get("k", compute); err != nil || v != 7 {
			t.Errorf("after a failure: got %d, %v; want 7", v, err)
		}
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("computations: got %d, want 2 (the failure, then one kept success)", n)
	}
}
