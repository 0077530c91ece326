package schema

import (
	"errors"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// hashedSource is a fakeSource that lists its documents under a server
// and a URL with a hash; block, when set, holds each fetch until it is
// closed, after a send on entered.
type hashedSource struct {
	*fakeSource
	server, path string
	block        chan struct{}
	entered      chan struct{}
}

func (h *hashedSource) OpenAPIV3(gv schema.GroupVersion) ([]byte, error) {
	if h.block != nil {
		h.entered <- struct{}{}
		<-h.block
	}
	return h.fakeSource.OpenAPIV3(gv)
}

func (h *hashedSource) OpenAPIV3URL(schema.GroupVersion) (string, string, error) {
	return h.server, h.path, nil
}

const widgetURL = "/openapi/v3/apis/test.io/v1?hash=ABC"

func sharedResolver(shared *SharedDocuments, src *hashedSource) *Resolver {
	return NewResolver(ResolverConfig{Source: src, IsBuiltin: builtinGroup("test.io"), Shared: shared})
}

// kindOrFail resolves the widget's kind; from any goroutine (t.Error).
func kindOrFail(t *testing.T, r *Resolver) *Kind {
	t.Helper()
	k, err := r.Kind(widgetGVK)
	if err != nil {
		t.Error(err)
	}
	return k
}

// TestSharedDocumentsFetchOncePerHash: ten contexts' Resolvers (three
// servers) fetch the document the servers list with one hash once per
// server at most, and once in all when they come one after another; each
// Resolver still builds its own Kind from the shared document.
func TestSharedDocumentsFetchOncePerHash(t *testing.T) {
	shared := NewSharedDocuments()
	var sources []*hashedSource
	var wg sync.WaitGroup
	for i := range 10 {
		src := &hashedSource{fakeSource: widgetSource(), server: []string{"https://a", "https://b", "https://c"}[i%3], path: widgetURL}
		sources = append(sources, src)
		r := sharedResolver(shared, src)
		wg.Go(func() { kindOrFail(t, r) })
	}
	wg.Wait()
	fetches := 0
	for _, s := range sources {
		fetches += int(s.fetches.Load())
	}
	if fetches < 1 || fetches > 3 {
		t.Errorf("10 Resolvers on 3 servers at once fetched %d times, want 1 to 3", fetches)
	}
	later := &hashedSource{fakeSource: widgetSource(), server: "https://d", path: widgetURL}
	kindOrFail(t, sharedResolver(shared, later))
	if n := later.fetches.Load(); n != 0 {
		t.Errorf("a Resolver after the others fetched %d times, want the parsed document", n)
	}
}

// TestSharedDocumentsNeedAHash: a listing without a hash names no content,
// so each Resolver fetches its own.
func TestSharedDocumentsNeedAHash(t *testing.T) {
	shared := NewSharedDocuments()
	for range 2 {
		src := &hashedSource{fakeSource: widgetSource(), server: "https://a", path: "/openapi/v3/apis/test.io/v1"}
		kindOrFail(t, sharedResolver(shared, src))
		if n := src.fetches.Load(); n != 1 {
			t.Errorf("fetched %d times, want 1", n)
		}
	}
}

// TestSharedDocumentsKeepNoFailure: a context whose fetch fails (RBAC, a
// 503) fails alone: the failure is not kept, and a context of the same
// server that waited for that fetch fetches for itself.
func TestSharedDocumentsKeepNoFailure(t *testing.T) {
	shared := NewSharedDocuments()
	failing := &hashedSource{fakeSource: widgetSource(), server: "https://a", path: widgetURL, block: make(chan struct{}), entered: make(chan struct{}, 1)}
	failing.fail = errors.New("forbidden")
	failed := make(chan error, 1)
	go func() {
		_, err := sharedResolver(shared, failing).Kind(widgetGVK)
		failed <- err
	}()
	<-failing.entered
	waiter := &hashedSource{fakeSource: widgetSource(), server: "https://a", path: widgetURL}
	got := make(chan error, 1)
	go func() {
		_, err := sharedResolver(shared, waiter).Kind(widgetGVK)
		got <- err
	}()
	time.Sleep(50 * time.Millisecond) // the waiter, most likely, waits for the failing fetch
	close(failing.block)
	if err := <-failed; err == nil {
		t.Fatal("the failing context resolved its kind")
	}
	if err := <-got; err != nil {
		t.Fatalf("the other context got %v, want its own fetch's document", err)
	}
	if n := waiter.fetches.Load(); n != 1 {
		t.Errorf("the other context fetched %d times, want 1", n)
	}
}

// TestSharedDocumentsHungServerHoldsNoOther: a server whose fetch hangs
// holds up only its own contexts; a context on another server listing the
// same document fetches it itself.
func TestSharedDocumentsHungServerHoldsNoOther(t *testing.T) {
	shared := NewSharedDocuments()
	hung := &hashedSource{fakeSource: widgetSource(), server: "https://hung", path: widgetURL, block: make(chan struct{}), entered: make(chan struct{}, 1)}
	defer close(hung.block)
	go func() { _, _ = sharedResolver(shared, hung).Kind(widgetGVK) }()
	<-hung.entered
	done := make(chan *Kind, 1)
	other := &hashedSource{fakeSource: widgetSource(), server: "https://ok", path: widgetURL}
	go func() { done <- kindOrFail(t, sharedResolver(shared, other)) }()
	select {
	case k := <-done:
		if k == nil || !k.Known() {
			t.Error("the other server's context got no schema")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a context on another server waited for the hung server's fetch")
	}
}
