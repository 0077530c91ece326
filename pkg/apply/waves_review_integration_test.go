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
			if took > timeout/2 {
				t.Errorf("the run took %v: the gate waited for an object that was never written", took)
			}
			if _, err := dyn(t).Resource(configMaps).Namespace(w.ns).Get(context.Background(), "after", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("the ConfigMap of the wave not sent exists (err %v)", err)
			}
		})
	}
}
