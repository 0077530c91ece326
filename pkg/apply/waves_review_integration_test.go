package apply_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/apply"
)

// TestAGateOnAnObjectThatWasNotWrittenFailsAtOnce: a wave whose object
// the server refused (an invalid data key) is never ready; the next wave's
// gate fails at once naming it, rather than waiting out the timeout for
// an object that will never appear. Through Apply and a saved plan.
func TestAGateOnAnObjectThatWasNotWrittenFailsAtOnce(t *testing.T) {
	for _, saved := range []bool{false, true} {
		t.Run(fmt.Sprintf("saved=%v", saved), func(t *testing.T) {
			w := newPlanWorld(t, fmt.Sprintf("waves-unwritten-%v", saved))
			objects := []*unstructured.Unstructured{
				inWave(w.configMap("refused", map[string]any{"not a valid key!": "v"}), "0"),
				inWave(w.configMap("after", map[string]any{"k": "v"}), "1"),
			}
			const timeout = time.Minute
			start := time.Now()
			var events []apply.Event
			if saved {
				p, _ := w.roundTrip(w.plan(objects...))
				events = w.execute(p, apply.ExecuteOptions{Timeout: timeout})
			} else {
				var err error
				if events, err = w.applier.Apply(context.Background(), apply.Input{Objects: objects}, apply.Options{Timeout: timeout}); err != nil {
					t.Fatal(err)
				}
			}
			took := time.Since(start)
			if events[0].Outcome != apply.Failed {
				t.Fatalf("refused: %v %v, want failed", events[0].Outcome, events[0].Err)
			}
			var gateErr *apply.GateError
			if events[1].Outcome != apply.Failed || !errors.As(events[1].Err, &gateErr) || gateErr.Wave != 1 ||
				!strings.Contains(gateErr.Object, "refused") || !strings.Contains(gateErr.Reason, "was not applied") {
				t.Errorf("after: %v %v, want failed: wave 1 not sent, refused does not exist (was not applied)", events[1].Outcome, events[1].Err)
			}
			if events[1].Wave != 1 || events[1].WaveReason != "sync-wave 1" {
				t.Errorf("after: wave %d %q, want the wave not sent: 1 \"sync-wave 1\"", events[1].Wave, events[1].WaveReason)
			}
			if took > timeout/2 {
				t.Errorf("the run took %v: the gate waited for an object that was never written", took)
			}
			if _, err := dyn(t).Resource(configMaps).Namespace(w.ns).Get(context.Background(), "after", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("the ConfigMap of the wave not sent exists (err %v)", err)
			}
		})
	}
}

// TestCancelWhileAGateWaitsEndsTheRun: a context cancelled (Ctrl-C) while
// the run waits for a Gauge that never becomes ready ends the run at once;
// the next wave is not sent.
func TestCancelWhileAGateWaitsEndsTheRun(t *testing.T) {
	w := newPlanWorld(t, "waves-cancel")
	group := "waves-cancel.kapply.test"
	objects := []*unstructured.Unstructured{
		inWave(gaugeCRD(group), "-1"),
		gauge(group, w.ns, "db", "0", "False"),
		inWave(w.configMap("after", map[string]any{"k": "v"}), "1"),
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan []apply.Event)
	go func() {
		events, err := w.applier.Apply(ctx, apply.Input{Objects: objects}, apply.Options{Timeout: 5 * time.Minute})
		if err != nil {
			t.Log(err)
		}
		done <- events
	}()
	time.Sleep(3 * time.Second) // the CRD established, the Gauge written
	cancelled := time.Now()
	cancel()
	select {
	case events := <-done:
		if took := time.Since(cancelled); took > 5*time.Second {
			t.Errorf("the run ended %v after the cancel", took)
		}
		if events != nil && events[2].Outcome != apply.Failed {
			t.Errorf("after: %v %v, want failed", events[2].Outcome, events[2].Err)
		}
		if events != nil {
			t.Logf("after: %v", events[2].Err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the run did not end a minute after the cancel")
	}
	if _, err := dyn(t).Resource(configMaps).Namespace(w.ns).Get(context.Background(), "after", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the ConfigMap of the wave not sent exists (err %v)", err)
	}
}

// TestAGateOfReadyObjectsListsNothing: a gate whose objects are ready
// once written (ConfigMaps) reads them and passes, without the wait's
// LIST and WATCH of their whole namespace: 100 waves of 100 ConfigMaps
// in one namespace listed 500,000 objects so.
func TestAGateOfReadyObjectsListsNothing(t *testing.T) {
	w := newPlanWorld(t, "waves-gate-lists")
	requests := &configMapRequests{ns: w.ns}
	applier, err := newExampleApplier(requests.wrap(cluster.Config))
	if err != nil {
		t.Fatal(err)
	}
	events, err := applier.Apply(context.Background(), apply.Input{Objects: wavedConfigMaps(w)}, apply.Options{})
	if err != nil {
		t.Fatal(err)
	}
	failOnFailures(t, events)
	var collection []string
	for _, seen := range requests.sorted() {
		if seen == "GET " {
			collection = append(collection, seen)
		}
	}
	if len(collection) > 0 {
		t.Errorf("%d LISTs or WATCHes of the namespace's ConfigMaps for 2 gates of ready ConfigMaps: %q", len(collection), requests.sorted())
	}
}
