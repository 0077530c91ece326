package apply_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/plan"
)

// gaugeCRD is a kind whose objects keep the status their file gives (no
// status subresource, no schema): a gate's readiness, set by the test as
// a controller would.
func gaugeCRD(group string) *unstructured.Unstructured {
	return mustYAML(fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gauges.%[1]s}
spec:
  group: %[1]s
  names: {kind: Gauge, plural: gauges}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`, group))
}

func mustYAML(text string) *unstructured.Unstructured {
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(text), &obj); err != nil {
		panic(err)
	}
	return &unstructured.Unstructured{Object: obj}
}

// gauge is a Gauge in wave whose Ready condition has status ready.
func gauge(group, ns, name, wave, ready string) *unstructured.Unstructured {
	return mustYAML(fmt.Sprintf(`apiVersion: %s/v1
kind: Gauge
metadata:
  name: %s
  namespace: %s
  annotations: {argocd.argoproj.io/sync-wave: %q}
status:
  conditions: [{type: Ready, status: %q, reason: Warming, message: not yet}]
`, group, name, ns, wave, ready))
}

func inWave(u *unstructured.Unstructured, wave string) *unstructured.Unstructured {
	u.SetAnnotations(map[string]string{"argocd.argoproj.io/sync-wave": wave})
	return u
}

// eventClock records when each object's event came.
type eventClock struct {
	mu sync.Mutex
	at map[string]time.Time
}

func (c *eventClock) onEvent(_ int, ev apply.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at == nil {
		c.at = map[string]time.Time{}
	}
	if ev.Object != nil {
		c.at[ev.Object.GetName()] = time.Now()
	}
}

func (c *eventClock) when(name string) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at[name]
}

// TestSyncWavesWaitForTheEarlierWaveToBeReady: a Gauge in wave -1 that is
// not ready holds back the ConfigMap of wave 0 (no annotation) until the
// test, as a controller, makes it ready; through Apply and through a saved
// plan's Execute, whose waves and gates survive the plan file.
func TestSyncWavesWaitForTheEarlierWaveToBeReady(t *testing.T) {
	for _, saved := range []bool{false, true} {
		t.Run(fmt.Sprintf("saved=%v", saved), func(t *testing.T) {
			ns := "waves-ready"
			if saved {
				ns += "-saved"
			}
			w := newPlanWorld(t, ns)
			group := ns + ".kapply.test"
			objects := []*unstructured.Unstructured{
				inWave(gaugeCRD(group), "-2"),
				w.configMap("app", map[string]any{"k": "v"}),
				gauge(group, w.ns, "db", "-1", "False"),
			}
			clock := &eventClock{}
			var p *plan.Plan
			if saved {
				var err error
				if p, err = w.applier.Plan(context.Background(), apply.Input{Objects: objects}, apply.PlanOptions{}); err != nil {
					t.Fatal(err)
				}
				p, _ = w.roundTrip(p)
				if len(p.Gates) != 3 || p.Items[1].ID.Name != "db" || p.Items[1].Wave != 1 || p.Items[2].Wave != 2 ||
					p.Items[2].WaveReason != "sync-wave 0" || len(p.Gates[2].Ready) != 1 || p.Gates[2].Ready[0].Name != "db" {
					t.Fatalf("saved plan's order: gates %+v, items %+v", p.Gates, p.Items)
				}
			}
			done := make(chan []apply.Event)
			go func() {
				var events []apply.Event
				var err error
				if saved {
					events, err = w.applier.Execute(context.Background(), p, apply.ExecuteOptions{Objects: apply.Input{Objects: objects}, OnEvent: clock.onEvent})
				} else {
					events, err = w.applier.Apply(context.Background(), apply.Input{Objects: objects}, apply.Options{OnEvent: clock.onEvent})
				}
				if err != nil {
					t.Error(err)
				}
				done <- events
			}()
			gauges := k8sschema.GroupVersionResource{Group: group, Version: "v1", Resource: "gauges"}
			for start := time.Now(); ; time.Sleep(100 * time.Millisecond) {
				if _, err := dyn(t).Resource(gauges).Namespace(w.ns).Get(context.Background(), "db", metav1.GetOptions{}); err == nil {
					break
				} else if time.Since(start) > time.Minute {
					t.Fatalf("wave -1's Gauge was not created: %v", err)
				}
			}
			time.Sleep(time.Second)
			if _, err := dyn(t).Resource(configMaps).Namespace(w.ns).Get(context.Background(), "app", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Fatalf("wave 0's ConfigMap exists while wave -1's Gauge is not ready (err %v)", err)
			}
			readyAt := time.Now()
			if _, err := dyn(t).Resource(gauges).Namespace(w.ns).Patch(context.Background(), "db", types.MergePatchType,
				[]byte(`{"status":{"conditions":[{"type":"Ready","status":"True"}]}}`), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			events := <-done
			failOnFailures(t, events)
			if db, app := clock.when("db"), clock.when("app"); db.IsZero() || app.IsZero() || !db.Before(readyAt) || !app.After(readyAt) {
				t.Errorf("events: db at %v, app at %v, Gauge made ready at %v: want db before, app after", db, app, readyAt)
			}
		})
	}
}

// TestAWaveWhoseGateFailsIsNotSent: a Gauge that is Stalled (kstatus
// Failed) stops the run before the next wave, naming the wave and the
// object; one never ready stops it at the timeout.
func TestAWaveWhoseGateFailsIsNotSent(t *testing.T) {
	for _, tc := range []struct {
		name, condition string
		timeout         time.Duration
		want            string
	}{
		{name: "failed", condition: `{type: Stalled, status: "True", reason: Broken, message: disk full}`, want: "is failed: disk full"},
		{name: "timeout", condition: `{type: Ready, status: "False"}`, timeout: 5 * time.Second, want: "was not ready in time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newPlanWorld(t, "waves-gate-"+tc.name)
			group := "gate-" + tc.name + ".kapply.test"
			db := mustYAML(fmt.Sprintf("apiVersion: %s/v1\nkind: Gauge\nmetadata: {name: db, namespace: %s, annotations: {argocd.argoproj.io/sync-wave: \"1\"}}\nstatus: {conditions: [%s]}\n",
				group, w.ns, tc.condition))
			objects := []*unstructured.Unstructured{inWave(gaugeCRD(group), "0"), db, inWave(w.configMap("app", map[string]any{"k": "v"}), "2")}
			start := time.Now()
			events, err := w.applier.Apply(context.Background(), apply.Input{Objects: objects}, apply.Options{Timeout: tc.timeout})
			if err != nil {
				t.Fatal(err)
			}
			if tc.timeout > 0 && time.Since(start) > tc.timeout+20*time.Second {
				t.Errorf("the run took %v with a %v timeout", time.Since(start), tc.timeout)
			}
			var gateErr *apply.GateError
			if events[2].Outcome != apply.Failed || !errors.As(events[2].Err, &gateErr) || gateErr.Wave != 2 ||
				!strings.Contains(gateErr.Object, "/db") || !strings.Contains(events[2].Err.Error(), tc.want) {
				t.Fatalf("app: %v %v, want failed: wave 2 not sent, naming db and %q", events[2].Outcome, events[2].Err, tc.want)
			}
			if _, err := dyn(t).Resource(configMaps).Namespace(w.ns).Get(context.Background(), "app", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("the ConfigMap of the wave not sent exists (err %v)", err)
			}
		})
	}
}
