package apply_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/apply/prune"
	"github.com/kapply/kapply/pkg/delete"
)

// deletes are the DELETE requests among recorded ones, in order.
func deletes(c *configMapRequests) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, seen := range c.seen {
		if name, ok := strings.CutPrefix(seen, "DELETE /"); ok {
			out = append(out, name)
		}
	}
	return out
}

// wavedConfigMaps are ConfigMaps listed out of their order: c (wave 2),
// a (wave -1), b (no annotation: wave 0).
func wavedConfigMaps(w *planWorld) []*unstructured.Unstructured {
	return []*unstructured.Unstructured{
		inWave(w.configMap("c", map[string]any{"k": "v"}), "2"),
		inWave(w.configMap("a", map[string]any{"k": "v"}), "-1"),
		w.configMap("b", map[string]any{"k": "v"}),
	}
}

// TestPruneAndDeleteGoInReverseWaveOrder: pruning and delete remove the
// last wave first (c, b, a), whatever the order objects are listed or
// declared in.
func TestPruneAndDeleteGoInReverseWaveOrder(t *testing.T) {
	want := []string{"c", "b", "a"}
	t.Run("prune", func(t *testing.T) {
		w := newPlanWorld(t, "waves-prune")
		opts := apply.Options{Write: apply.WriteOptions{Namespace: w.ns}, Prune: &prune.Options{ApplySet: "waves"}}
		events, err := w.applier.Apply(context.Background(), apply.Input{Objects: wavedConfigMaps(w)}, opts)
		if err != nil {
			t.Fatal(err)
		}
		failOnFailures(t, events)
		requests := &configMapRequests{ns: w.ns}
		applier, err := newExampleApplier(requests.wrap(cluster.Config))
		if err != nil {
			t.Fatal(err)
		}
		events, err = applier.Apply(context.Background(), apply.Input{Objects: []*unstructured.Unstructured{w.configMap("stays", nil)}}, opts)
		if err != nil {
			t.Fatal(err)
		}
		failOnFailures(t, events)
		if got := deletes(requests); !slices.Equal(got, want) {
			t.Errorf("pruned in the order %q, want %q", got, want)
		}
	})
	t.Run("saved-plan", func(t *testing.T) {
		w := newPlanWorld(t, "waves-prune-plan")
		set := &prune.Options{ApplySet: "waves"}
		write := apply.WriteOptions{Namespace: w.ns}
		events, err := w.applier.Apply(context.Background(), apply.Input{Objects: wavedConfigMaps(w)}, apply.Options{Write: write, Prune: set})
		if err != nil {
			t.Fatal(err)
		}
		failOnFailures(t, events)
		files := []*unstructured.Unstructured{w.configMap("stays", map[string]any{"k": "v"})}
		p, err := w.applier.Plan(context.Background(), apply.Input{Objects: files}, apply.PlanOptions{Write: write, Prune: set})
		if err != nil {
			t.Fatal(err)
		}
		p, _ = w.roundTrip(p)
		requests := &configMapRequests{ns: w.ns}
		applier, err := newExampleApplier(requests.wrap(cluster.Config))
		if err != nil {
			t.Fatal(err)
		}
		events, err = applier.Execute(context.Background(), p, apply.ExecuteOptions{Objects: apply.Input{Objects: files}})
		if err != nil {
			t.Fatal(err)
		}
		failOnFailures(t, events)
		if got := deletes(requests); !slices.Equal(got, want) {
			t.Errorf("the saved plan pruned in the order %q, want %q", got, want)
		}
	})
	t.Run("prune-wait", func(t *testing.T) {
		w := newPlanWorld(t, "waves-prune-wait")
		opts := apply.Options{Write: apply.WriteOptions{Namespace: w.ns}, Prune: &prune.Options{ApplySet: "waves"}, Waves: apply.WaveOptions{WaitPruned: true}, Timeout: time.Minute}
		events, err := w.applier.Apply(context.Background(), apply.Input{Objects: wavedConfigMaps(w)}, opts)
		if err != nil {
			t.Fatal(err)
		}
		failOnFailures(t, events)
		// c, of the last wave, is held by a finalizer: the waves before it
		// are pruned only once it is gone.
		w.mergePatch(configMaps, "c", `{"metadata":{"finalizers":["kapply.test/hold"]}}`)
		requests := &configMapRequests{ns: w.ns}
		applier, err := newExampleApplier(requests.wrap(cluster.Config))
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan []apply.Event)
		go func() {
			events, err := applier.Apply(context.Background(), apply.Input{Objects: []*unstructured.Unstructured{w.configMap("stays", nil)}}, opts)
			if err != nil {
				t.Error(err)
			}
			done <- events
		}()
		for start := time.Now(); len(deletes(requests)) == 0; time.Sleep(50 * time.Millisecond) {
			if time.Since(start) > time.Minute {
				t.Fatal("c was never pruned")
			}
		}
		time.Sleep(time.Second)
		if got := deletes(requests); !slices.Equal(got, []string{"c"}) {
			t.Fatalf("while c is held: deleted %q, want only c", got)
		}
		w.mergePatch(configMaps, "c", `{"metadata":{"finalizers":null}}`)
		failOnFailures(t, <-done)
		if got := deletes(requests); !slices.Equal(got, want) {
			t.Errorf("pruned in the order %q, want %q", got, want)
		}
	})
	t.Run("delete", func(t *testing.T) {
		w := newPlanWorld(t, "waves-delete")
		w.mustApply(wavedConfigMaps(w)...)
		requests := &configMapRequests{ns: w.ns}
		applier, err := newExampleApplier(requests.wrap(cluster.Config))
		if err != nil {
			t.Fatal(err)
		}
		events, err := applier.Delete(context.Background(), apply.Input{Objects: wavedConfigMaps(w)}, delete.Options{Namespace: w.ns, Wait: true})
		if err != nil {
			t.Fatal(err)
		}
		failOnFailures(t, events)
		if got := deletes(requests); !slices.Equal(got, want) {
			t.Errorf("deleted in the order %q, want %q", got, want)
		}
	})
}
