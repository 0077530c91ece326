package main

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kapply/kapply/pkg/apply"
	kcluster "github.com/kapply/kapply/pkg/cluster"
)

// syncBuffer is a buffer the stream's goroutines and the test share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func createdEvent(name string) apply.Event {
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name}}}
	return apply.Event{Object: obj, Outcome: apply.Created}
}

// TestLinesPrintedAsObjectsAreDone: a line is printed as soon as its object
// and all before it in the input are done; one held back longer than
// holdBack by a slow object before it is printed anyway; the slow one
// follows when done; close prints what still waits; printRest prints only
// the rest and the summary.
func TestLinesPrintedAsObjectsAreDone(t *testing.T) {
	var out, errOut syncBuffer
	streams := genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}
	printer, err := newEventPrinter("", kcluster.NoDryRun)
	if err != nil {
		t.Fatal(err)
	}
	const hold = 200 * time.Millisecond
	s := newLineStream(printer, streams, nil, hold)
	s.add(1, createdEvent("b"))
	if got := out.String(); got != "" {
		t.Fatalf("printed before the object ahead of it was done: %q", got)
	}
	s.add(0, createdEvent("a"))
	if got := out.String(); got != "configmap/a created\nconfigmap/b created\n" {
		t.Fatalf("in order: %q", got)
	}
	s.add(3, createdEvent("d"))
	time.Sleep(3 * hold)
	if got := out.String(); !strings.HasSuffix(got, "configmap/d created\n") {
		t.Fatalf("held back longer than %s: %q", hold, got)
	}
	s.add(2, createdEvent("c"))
	if got := out.String(); !strings.HasSuffix(got, "configmap/d created\nconfigmap/c created\n") {
		t.Fatalf("the slow one: %q", got)
	}
	s.add(5, createdEvent("f"))
	printed := s.close()
	if got := out.String(); !strings.HasSuffix(got, "configmap/f created\n") {
		t.Fatalf("close: %q", got)
	}
	events := []apply.Event{createdEvent("a"), createdEvent("b"), createdEvent("c"), createdEvent("d"), createdEvent("e"), createdEvent("f")}
	printer.printRest(streams, events, printed)
	want := "configmap/a created\nconfigmap/b created\nconfigmap/d created\nconfigmap/c created\nconfigmap/f created\nconfigmap/e created\n"
	if got := out.String(); got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
	if got := errOut.String(); got != "6 created, 0 configured, 0 unchanged, 0 failed\n" {
		t.Errorf("stderr %q", got)
	}
}
