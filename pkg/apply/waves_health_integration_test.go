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
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/health"
)

// phasedGauge is a Gauge of wave -1 whose status.phase is phase: kstatus
// calls it Current at once (no conditions); only a health rule waits.
func phasedGauge(group, ns, phase string) *unstructured.Unstructured {
	return mustYAML(fmt.Sprintf("apiVersion: %s/v1\nkind: Gauge\nmetadata: {name: db, namespace: %s, annotations: {argocd.argoproj.io/sync-wave: \"-1\"}}\nstatus: {phase: %s}\n", group, ns, phase))
}

func gaugeHealth(t *testing.T, group string) apply.HealthFunc {
	t.Helper()
	rules, err := health.Parse([]byte(fmt.Sprintf("- apiVersion: %s/v1\n  kind: Gauge\n  current: status.phase == \"Ready\"\n  failed: status.phase == \"Broken\"\n", group)))
	if err != nil {
		t.Fatal(err)
	}
	checker, err := health.Compile(rules)
	if err != nil {
		t.Fatal(err)
	}
	return checker.Status
}

// TestAHealthRuleHoldsTheNextWave: with a health rule for Gauges, wave
// 0's ConfigMap waits until the test sets the Gauge's phase to Ready
// (kstatus alone would call the Gauge ready at once); a phase the rule's
// failed expression matches stops the run naming the object and the
// expression.
func TestAHealthRuleHoldsTheNextWave(t *testing.T) {
	t.Run("current", func(t *testing.T) {
		w := newPlanWorld(t, "waves-health")
		group := "waves-health.kapply.test"
		objects := []*unstructured.Unstructured{inWave(gaugeCRD(group), "-2"), w.configMap("app", map[string]any{"k": "v"}), phasedGauge(group, w.ns, "Creating")}
		clock := &eventClock{}
		done := make(chan []apply.Event)
		go func() {
			events, err := w.applier.Apply(context.Background(), apply.Input{Objects: objects}, apply.Options{OnEvent: clock.onEvent, Waves: apply.WaveOptions{Health: gaugeHealth(t, group)}})
			if err != nil {
				t.Error(err)
			}
			done <- events
		}()
		gauges := k8sschema.GroupVersionResource{Group: group, Version: "v1", Resource: "gauges"}
		for start := time.Now(); clock.when("db").IsZero(); time.Sleep(100 * time.Millisecond) {
			if time.Since(start) > time.Minute {
				t.Fatal("the Gauge of wave -1 was not applied")
			}
		}
		time.Sleep(time.Second)
		if _, err := dyn(t).Resource(configMaps).Namespace(w.ns).Get(context.Background(), "app", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("wave 0's ConfigMap exists while the Gauge's phase is Creating (err %v)", err)
		}
		readyAt := time.Now()
		if _, err := dyn(t).Resource(gauges).Namespace(w.ns).Patch(context.Background(), "db", types.MergePatchType,
			[]byte(`{"status":{"phase":"Ready"}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		events := <-done
		failOnFailures(t, events)
		if app := clock.when("app"); !app.After(readyAt) {
			t.Errorf("app's event at %v, before the Gauge was made Ready at %v", app, readyAt)
		}
	})
	t.Run("failed", func(t *testing.T) {
		w := newPlanWorld(t, "waves-health-failed")
		group := "waves-health-failed.kapply.test"
		objects := []*unstructured.Unstructured{inWave(gaugeCRD(group), "-2"), w.configMap("app", map[string]any{"k": "v"}), phasedGauge(group, w.ns, "Broken")}
		events, err := w.applier.Apply(context.Background(), apply.Input{Objects: objects}, apply.Options{Waves: apply.WaveOptions{Health: gaugeHealth(t, group)}})
		if err != nil {
			t.Fatal(err)
		}
		var gateErr *apply.GateError
		if events[1].Outcome != apply.Failed || !errors.As(events[1].Err, &gateErr) || !strings.Contains(gateErr.Object, "/db") ||
			!strings.Contains(events[1].Err.Error(), `status.phase == "Broken"`) {
			t.Fatalf("app: %v %v, want not sent, naming db and the failed expression", events[1].Outcome, events[1].Err)
		}
	})
}
