package apply_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/plan"
)

// beforeFirstPatch runs move once, just before the first PATCH of a
// ConfigMap the wrapped client sends: another writer's move between
// Execute's check and its write, which fails the write's resourceVersion
// precondition.
type beforeFirstPatch struct {
	once sync.Once
	move func()
}

func (b *beforeFirstPatch) wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodPatch && strings.Contains(req.URL.Path, "/configmaps/") {
				b.once.Do(b.move)
			}
			return next.RoundTrip(req)
		})
	})
	return cfg
}

// TestSavedPlanWritesThroughAMoveItDoesNotDependOn: a controller's or
// another writer's write between a saved plan's check and its write (as
// the apiextensions controller writes a new CRD's conditions) fails the
// write's precondition. The item still verifies against the object as it
// now is, so it is written, and the other writer's field is kept; a move
// of the field the item changes is refused naming it.
func TestSavedPlanWritesThroughAMoveItDoesNotDependOn(t *testing.T) {
	for _, tc := range []struct {
		name, move string
		serverSide bool
		refused    bool
	}{
		{name: "client-side", move: `{"metadata":{"labels":{"team":"x"}}}`},
		{name: "server-side", move: `{"metadata":{"labels":{"team":"x"}}}`, serverSide: true},
		{name: "own-field", move: `{"data":{"k":"3"}}`, refused: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newPlanWorld(t, "moved-under-write-"+tc.name)
			w.mustApply(w.configMap("a", map[string]any{"k": "1"}))
			objects := []*unstructured.Unstructured{w.configMap("a", map[string]any{"k": "2"})}
			p, err := w.applier.Plan(context.Background(), apply.Input{Objects: objects},
				apply.PlanOptions{Write: apply.WriteOptions{ServerSide: tc.serverSide}, LocalServerSide: tc.serverSide})
			if err != nil {
				t.Fatal(err)
			}
			p, _ = w.roundTrip(p)
			var moveErr error
			move := &beforeFirstPatch{move: func() {
				_, moveErr = dyn(t).Resource(configMaps).Namespace(w.ns).Patch(context.Background(), "a", types.MergePatchType,
					[]byte(tc.move), metav1.PatchOptions{FieldManager: "other-writer"})
			}}
			applier, err := newExampleApplier(move.wrap(cluster.Config))
			if err != nil {
				t.Fatal(err)
			}
			events, err := applier.Execute(context.Background(), p, apply.ExecuteOptions{Objects: apply.Input{Objects: objects}})
			if err != nil || moveErr != nil {
				t.Fatal(err, moveErr)
			}
			live := w.read(configMaps, "a")
			if tc.refused {
				var changed *plan.ChangedError
				if events[0].Outcome != apply.Failed || !errors.As(events[0].Err, &changed) || !strings.Contains(events[0].Err.Error(), "data.k") {
					t.Fatalf("event %v, err %v: want refused as changed, naming data.k", events[0].Outcome, events[0].Err)
				}
				if got := dataOf(live, "k"); got != "3" {
					t.Errorf("data.k = %q, want the other writer's 3 kept", got)
				}
				return
			}
			failOnFailures(t, events)
			if events[0].Outcome != apply.Configured {
				t.Errorf("outcome %v, want configured", events[0].Outcome)
			}
			if got := dataOf(live, "k"); got != "2" {
				t.Errorf("data.k = %q, want the plan's 2", got)
			}
			if live.GetLabels()["team"] != "x" {
				t.Errorf("the other writer's label is gone: %v", live.GetLabels())
			}
		})
	}
}
