package schema

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

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

func TestResolverSourceError(t *testing.T) {
	src := &fakeSource{fail: errors.New("connection refused")}
	r := NewResolver(ResolverConfig{Source: src})
	for range 2 {
		_, err := r.Kind(widgetGVK)
		if err == nil || !strings.Contains(err.Error(), "fetching OpenAPI v3 document of test.io/v1: connection refused") {
			t.Errorf("got %v, want the fetch error with context", err)
		}
	}
	if n := src.fetches.Load(); n != 1 {
		t.Errorf("fetches after a failure: got %d, want 1 (no retry within a run)", n)
	}
}

func TestResolverCRDTakesPrecedence(t *testing.T) {
	src := &fakeSource{docs: map[schema.GroupVersion]string{crdGVK.GroupVersion(): strings.ReplaceAll(
		strings.ReplaceAll(widgetDoc, `"test.io"`, `"example.com"`), "test.v1.", "ex.v1.")}}
	r := NewResolver(ResolverConfig{Source: src})
	fromServer, err := r.Kind(crdGVK)
	if err != nil || fromServer.Root.Field("spec").Field("ports") == nil {
		t.Fatalf("before AddCRD: got %v, want the server's schema", err)
	}
	r.AddCRD(loadCRD(t, widgetCRD))
	fromCRD, err := r.Kind(crdGVK)
	if err != nil {
		t.Fatal(err)
	}
	checkWant(t, fromCRD.Root, want{path: "spec.byName", typ: List, list: Map, keys: []string{"name"}})
}

func TestResolverAppliesOverrides(t *testing.T) {
	r := NewResolver(ResolverConfig{Overrides: mustOverrides(t, "Widget.example.com:spec.rules=name")})
	r.AddCRD(loadCRD(t, widgetCRD))
	kind, err := r.Kind(crdGVK)
	if err != nil {
		t.Fatal(err)
	}
	checkWant(t, kind.Root, want{path: "spec.rules", typ: List, list: Map, keys: []string{"name"}})

	bad := NewResolver(ResolverConfig{Source: widgetSource(), IsBuiltin: builtinGroup("test.io"),
		Overrides: mustOverrides(t, "Widget.test.io:spec.args:set")})
	if _, err := bad.Kind(widgetGVK); err == nil || !strings.Contains(err.Error(), "custom resources only") {
		t.Errorf("override on a built-in kind: got %v, want it refused", err)
	}
}
