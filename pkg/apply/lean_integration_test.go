package apply_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/apply"
)

// leanManifest is six ConfigMaps (enough to be read by one LIST); value
// sets cm-0's data, bad cm-5's (a list: the server refuses it).
func leanManifest(value string, bad bool) string {
	var b strings.Builder
	for i := range 6 {
		data := "a: same"
		switch {
		case i == 0:
			data = "a: " + value
		case i == 5 && bad:
			data = "a: [1]"
		}
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\ndata:\n  %s\n", i, data)
	}
	return b.String()
}

// collected gathers OnEvent's events by place.
type collected struct {
	mu     sync.Mutex
	events map[int]apply.Event
}

func (c *collected) add(i int, ev apply.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events[i] = ev
}

// TestLeanRunKeepsOnlyWhatHappened: with Options.Lean, OnEvent gets each
// event whole, and Apply returns them without Plan, with Live and Result
// cut to what names the object — but a failed event keeps its objects.
// NoManagedFields reads live objects without managedFields; without it,
// they have them.
func TestLeanRunKeepsOnlyWhatHappened(t *testing.T) {
	requireCluster(t)
	w := newWorld(t, kapplyTool, nil)
	failOnFailures(t, kapplyRun(t, w, writeManifest(t, w, leanManifest("one", false))))

	path := writeManifest(t, w, leanManifest("two", true))
	seen := &collected{events: map[int]apply.Event{}}
	events := kapplyRunOpts(t, w, fileRun{path, apply.Options{Write: apply.WriteOptions{Namespace: w.ns}, OnEvent: seen.add, Lean: true, NoManagedFields: true}})
	if len(events) != 6 || len(seen.events) != 6 {
		t.Fatalf("%d events returned, %d seen, want 6 each", len(events), len(seen.events))
	}
	wantOutcomes := []apply.Outcome{apply.Configured, apply.Unchanged, apply.Unchanged, apply.Unchanged, apply.Unchanged, apply.Failed}
	for i, ev := range events {
		full := seen.events[i]
		if ev.Outcome != wantOutcomes[i] || full.Outcome != wantOutcomes[i] {
			t.Fatalf("object %d: returned %s, seen %s, want %s (%v)", i, ev.Outcome, full.Outcome, wantOutcomes[i], full.Err)
		}
		if full.Live == nil {
			t.Fatalf("object %d: OnEvent had no live object", i)
		}
		if _, has := full.Live.Object["metadata"].(map[string]any)["managedFields"]; has {
			t.Errorf("object %d: OnEvent's live object has managedFields despite NoManagedFields", i)
		}
		if ev.Outcome == apply.Failed {
			if ev.Live != full.Live || ev.Live.Object["data"] == nil {
				t.Errorf("failed object %d: its live object was cut: %v", i, ev.Live)
			}
			continue
		}
		if full.Item == nil || full.Result == nil || full.Result.Object["data"] == nil {
			t.Errorf("object %d: OnEvent's event lacks its item or result", i)
		}
		if ev.Item != nil {
			t.Errorf("object %d: the returned event keeps its item", i)
		}
		for side, pair := range map[string][2]*unstructured.Unstructured{"Live": {ev.Live, full.Live}, "Result": {ev.Result, full.Result}} {
			if kept, whole := pair[0], pair[1]; kept.GetUID() == "" || kept.GetUID() != whole.GetUID() {
				t.Errorf("object %d: returned %s has uid %q, want %q", i, side, kept.GetUID(), whole.GetUID())
			}
		}
		if got := slices.Sorted(maps.Keys(ev.Result.Object)); !slices.Equal(got, []string{"apiVersion", "kind", "metadata"}) {
			t.Errorf("object %d: returned Result has %v, want apiVersion, kind, metadata", i, got)
		}
		metadata := ev.Result.Object["metadata"].(map[string]any)
		if got := slices.Sorted(maps.Keys(metadata)); !slices.Equal(got, []string{"name", "namespace", "uid"}) {
			t.Errorf("object %d: returned Result's metadata has %v, want name, namespace, uid", i, got)
		}
	}

	seen = &collected{events: map[int]apply.Event{}}
	kapplyRunOpts(t, w, fileRun{path, apply.Options{Write: apply.WriteOptions{Namespace: w.ns}, OnEvent: seen.add, Lean: true}})
	if _, has := seen.events[1].Live.Object["metadata"].(map[string]any)["managedFields"]; !has {
		t.Errorf("without NoManagedFields, the live object has no managedFields")
	}
}
