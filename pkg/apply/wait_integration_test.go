package apply_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/wait"
)

var jobs = k8sschema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}

// requestCounter counts the LIST and WATCH requests of a client and
// closes watching when the first WATCH is sent: the wait has begun, and
// the test's controller may start writing status.
type requestCounter struct {
	mu       sync.Mutex
	watches  []string
	lists    int
	watching chan struct{}
	once     sync.Once
}

func newRequestCounter() *requestCounter { return &requestCounter{watching: make(chan struct{})} }

func (c *requestCounter) client(t *testing.T) dynamic.Interface {
	t.Helper()
	cfg := rest.CopyConfig(cluster.Config)
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodGet {
				c.mu.Lock()
				if req.URL.Query().Get("watch") == "true" {
					c.watches = append(c.watches, req.URL.Path)
					c.once.Do(func() { close(c.watching) })
				} else {
					c.lists++
				}
				c.mu.Unlock()
			}
			return next.RoundTrip(req)
		})
	})
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("creating client: %v", err)
	}
	return client
}

func (c *requestCounter) counts() (watches []string, lists int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.watches...), c.lists
}

// controller plays a controller manager, which the test cluster lacks: once
// the wait watches, it runs each write in turn, off the test's goroutine.
type controller struct {
	done chan error
}

func startController(counter *requestCounter, writes ...func() error) *controller {
	c := &controller{done: make(chan error, 1)}
	go func() {
		select {
		case <-counter.watching:
		case <-time.After(30 * time.Second):
			c.done <- fmt.Errorf("the wait never opened a watch")
			return
		}
		for _, write := range writes {
			if err := write(); err != nil {
				c.done <- err
				return
			}
		}
		c.done <- nil
	}()
	return c
}

func (c *controller) check(t *testing.T) {
	t.Helper()
	if err := <-c.done; err != nil {
		t.Fatalf("controller: %v", err)
	}
}

// writeStatus is a controller's write of status through the status
// subresource (a JSON merge patch).
func writeStatus(w *world, gvr k8sschema.GroupVersionResource, name, statusJSON string) func() error {
	return func() error {
		c, err := dynamic.NewForConfig(cluster.Config)
		if err != nil {
			return err
		}
		body := fmt.Sprintf(`{"status":%s}`, statusJSON)
		_, err = c.Resource(gvr).Namespace(w.ns).Patch(context.Background(), name, types.MergePatchType, []byte(body),
			metav1.PatchOptions{FieldManager: otherWriter}, "status")
		if err != nil {
			return fmt.Errorf("writing the status of %s/%s: %w", gvr.Resource, name, err)
		}
		return nil
	}
}

func pause(d time.Duration) func() error {
	return func() error { time.Sleep(d); return nil }
}

func deploymentYAML(name string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s}
spec:
  replicas: 1
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec: {containers: [{name: c, image: nginx}]}
`, name)
}

const (
	deploymentProgressing = `{"observedGeneration":1,"replicas":1,"updatedReplicas":1,"unavailableReplicas":1,"conditions":[
		{"type":"Available","status":"False","reason":"MinimumReplicasUnavailable","message":"Deployment does not have minimum availability."},
		{"type":"Progressing","status":"True","reason":"ReplicaSetUpdated","message":"ReplicaSet is progressing."}]}`
	deploymentAvailable = `{"observedGeneration":1,"replicas":1,"updatedReplicas":1,"readyReplicas":1,"availableReplicas":1,"unavailableReplicas":null,"conditions":[
		{"type":"Available","status":"True","reason":"MinimumReplicasAvailable","message":"Deployment has minimum availability."},
		{"type":"Progressing","status":"True","reason":"NewReplicaSetAvailable","message":"ReplicaSet has successfully progressed."}]}`
	deploymentStuck = `{"observedGeneration":1,"replicas":1,"updatedReplicas":1,"unavailableReplicas":1,"conditions":[
		{"type":"Available","status":"False","reason":"MinimumReplicasUnavailable","message":"Deployment does not have minimum availability."},
		{"type":"Progressing","status":"False","reason":"ProgressDeadlineExceeded","message":"ReplicaSet \"web-5d9c\" has timed out progressing."}]}`
)

// applyForWait applies manifest in the world and returns what to wait for.
func applyForWait(t *testing.T, w *world, manifest string) []wait.Target {
	t.Helper()
	events := mustKapply(t, w, writeManifest(t, w, manifest))
	targets, _ := apply.WaitTargets(events)
	if len(targets) != len(events) {
		t.Fatalf("%d targets for %d events", len(targets), len(events))
	}
	return targets
}

// waitOrdered runs wait.Ready and also returns the order in which results
// became final, by target ref.
func waitOrdered(t *testing.T, client dynamic.Interface, targets []wait.Target, timeout time.Duration, onResult func(wait.Result)) []wait.Result {
	t.Helper()
	results, err := wait.Ready(context.Background(), client, targets, wait.Options{Timeout: timeout,
		OnResult: func(_ int, r wait.Result) {
			if onResult != nil {
				onResult(r)
			}
		}})
	if err != nil {
		t.Fatalf("wait: %v", err)
	}
	for _, r := range results {
		t.Logf("%s: %s %s: %s (timed out: %v)", r.Target.Ref(), r.Status, r.Reason, r.Message, r.TimedOut)
	}
	return results
}

func TestWaitDeploymentProgressingThenAvailable(t *testing.T) {
	requireCluster(t)
	w := newWorld(t, kapplyTool, nil)
	targets := applyForWait(t, w, deploymentYAML("web"))
	counter := newRequestCounter()
	var availableWritten atomic.Bool
	ctrl := startController(counter,
		writeStatus(w, deployments, "web", deploymentProgressing),
		pause(300*time.Millisecond),
		func() error { availableWritten.Store(true); return nil },
		writeStatus(w, deployments, "web", deploymentAvailable))
	var earlyResult atomic.Bool
	results := waitOrdered(t, counter.client(t), targets, 30*time.Second, func(wait.Result) {
		earlyResult.Store(!availableWritten.Load())
	})
	ctrl.check(t)
	if r := results[0]; !r.Ready() || r.TimedOut {
		t.Errorf("deployment: %s (%s: %s), want Current", r.Status, r.Reason, r.Message)
	}
	if earlyResult.Load() {
		t.Errorf("the deployment was reported final before it was available")
	}
}

func TestWaitFailedRollout(t *testing.T) {
	requireCluster(t)
	w := newWorld(t, kapplyTool, nil)
	targets := applyForWait(t, w, deploymentYAML("web"))
	counter := newRequestCounter()
	ctrl := startController(counter,
		writeStatus(w, deployments, "web", deploymentProgressing),
		pause(200*time.Millisecond),
		writeStatus(w, deployments, "web", deploymentStuck))
	start := time.Now()
	results := waitOrdered(t, counter.client(t), targets, 30*time.Second, nil)
	ctrl.check(t)
	r := results[0]
	if r.Status != kstatus.FailedStatus || r.TimedOut || r.Reason != "ProgressDeadlineExceeded" || !strings.Contains(r.Message, "has timed out progressing") {
		t.Errorf("deployment: %s (%s: %s, timed out %v), want Failed with ProgressDeadlineExceeded and the condition's message", r.Status, r.Reason, r.Message, r.TimedOut)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("a failed rollout took %s to report: failure must end the wait for it", d)
	}
}

func TestWaitJobFailed(t *testing.T) {
	requireCluster(t)
	w := newWorld(t, kapplyTool, nil)
	targets := applyForWait(t, w, `apiVersion: batch/v1
kind: Job
metadata: {name: migrate}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox, command: ["false"]}]
`)
	counter := newRequestCounter()
	now := time.Now().UTC().Format(time.RFC3339)
	// kstatus counts a Job as Current once it has started (it waits for
	// no Job to complete), so the controller's first write fails it: the
	// wait sees it not started (InProgress), then Failed.
	ctrl := startController(counter,
		pause(200*time.Millisecond),
		writeStatus(w, jobs, "migrate", fmt.Sprintf(`{"startTime":%[1]q,"active":0,"failed":1,"conditions":[
			{"type":"FailureTarget","status":"True","reason":"BackoffLimitExceeded","message":"Job has reached the specified backoff limit","lastTransitionTime":%[1]q,"lastProbeTime":%[1]q},
			{"type":"Failed","status":"True","reason":"BackoffLimitExceeded","message":"Job has reached the specified backoff limit","lastTransitionTime":%[1]q,"lastProbeTime":%[1]q}]}`, now)))
	results := waitOrdered(t, counter.client(t), targets, 30*time.Second, nil)
	ctrl.check(t)
	r := results[0]
	if r.Status != kstatus.FailedStatus || r.Reason != "BackoffLimitExceeded" || r.Message != "Job has reached the specified backoff limit" {
		t.Errorf("job: %s (%s: %s), want Failed with the Failed condition's reason and message", r.Status, r.Reason, r.Message)
	}
}

func TestWaitCustomResourceReadyFalseThenTrue(t *testing.T) {
	requireCluster(t)
	w := newWorld(t, kapplyTool, nil)
	group := strings.ToLower(strings.ReplaceAll(w.ns, "-", "")) + ".example.com"
	crd := fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.%[1]s}
spec:
  group: %[1]s
  names: {kind: Gadget, plural: gadgets, singular: gadget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
`, group)
	mustKapply(t, w, writeManifest(t, w, crd))
	gadgets := k8sschema.GroupVersionResource{Group: group, Version: "v1", Resource: "gadgets"}
	gadget := func(size int) string {
		return fmt.Sprintf("apiVersion: %s/v1\nkind: Gadget\nmetadata: {name: g1}\nspec: {size: %d}\n", group, size)
	}
	applyForWait(t, w, gadget(1))
	// The gadget's controller has seen generation 1 and says it is not
	// ready; the apply below changes the spec (generation 2).
	if err := writeStatus(w, gadgets, "g1", `{"observedGeneration":1,"conditions":[{"type":"Ready","status":"False","reason":"Provisioning","message":"waiting for a disk"}]}`)(); err != nil {
		t.Fatal(err)
	}
	targets := applyForWait(t, w, gadget(2))
	if s, reason, _ := wait.ComputeStatus(get(t, w, objRef{gadgets, "g1"})); s != kstatus.InProgressStatus {
		t.Fatalf("before the controller saw generation 2: %s (%s), want InProgress", s, reason)
	}
	counter := newRequestCounter()
	var readyWritten atomic.Bool
	ctrl := startController(counter,
		writeStatus(w, gadgets, "g1", `{"observedGeneration":2,"conditions":[{"type":"Ready","status":"False","reason":"Provisioning","message":"waiting for a disk"}]}`),
		pause(300*time.Millisecond),
		func() error { readyWritten.Store(true); return nil },
		writeStatus(w, gadgets, "g1", `{"observedGeneration":2,"conditions":[{"type":"Ready","status":"True","reason":"Provisioned","message":"disk attached"}]}`))
	var early atomic.Bool
	results := waitOrdered(t, counter.client(t), targets, 30*time.Second, func(wait.Result) { early.Store(!readyWritten.Load()) })
	ctrl.check(t)
	if r := results[0]; !r.Ready() {
		t.Errorf("gadget: %s (%s: %s), want Current", r.Status, r.Reason, r.Message)
	}
	if early.Load() {
		t.Errorf("the gadget was reported final while Ready was False")
	}
}

func TestWaitTimesOutNamingTheObject(t *testing.T) {
	requireCluster(t)
	w := newWorld(t, kapplyTool, nil)
	targets := applyForWait(t, w, deploymentYAML("stuck")+"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\n")
	counter := newRequestCounter()
	ctrl := startController(counter, writeStatus(w, deployments, "stuck", deploymentProgressing))
	var reported []string
	var mu sync.Mutex
	results := waitOrdered(t, counter.client(t), targets, 3*time.Second, func(r wait.Result) {
		mu.Lock()
		defer mu.Unlock()
		reported = append(reported, r.Target.Ref())
	})
	ctrl.check(t)
	stuck, cfg := results[0], results[1]
	if stuck.Status != kstatus.InProgressStatus || !stuck.TimedOut || stuck.Target.Ref() != "deployment.apps/stuck" ||
		stuck.Reason == "" || stuck.Message == "" {
		t.Errorf("stuck: %s %s (%s: %s, timed out %v), want InProgress, timed out, with a reason", stuck.Target.Ref(), stuck.Status, stuck.Reason, stuck.Message, stuck.TimedOut)
	}
	if !cfg.Ready() || cfg.TimedOut {
		t.Errorf("configmap: %s, want Current", cfg.Status)
	}
	if want := []string{"configmap/cfg", "deployment.apps/stuck"}; fmt.Sprint(reported) != fmt.Sprint(want) {
		t.Errorf("reported %v, want %v (the ready one first, the stuck one at the timeout)", reported, want)
	}
}

func jobYAML(name string) string {
	return fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata: {name: %s}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
`, name)
}

// TestWaitOneWatchPerResourceAndNamespace waits for 20 objects of two kinds
// (Deployments and Jobs, none ready when the wait starts) in two
// namespaces: 4 (resource, namespace) pairs, so 4 LISTs and 4 WATCHes, not
// 20.
func TestWaitOneWatchPerResourceAndNamespace(t *testing.T) {
	requireCluster(t)
	var targets []wait.Target
	var writes []func() error
	started := fmt.Sprintf(`{"startTime":%q}`, time.Now().UTC().Format(time.RFC3339))
	for range 2 {
		w := newWorld(t, kapplyTool, nil)
		var manifest strings.Builder
		for i := range 5 {
			fmt.Fprintf(&manifest, "%s---\n%s---\n", deploymentYAML(fmt.Sprintf("web%d", i)), jobYAML(fmt.Sprintf("job%d", i)))
			writes = append(writes, writeStatus(w, deployments, fmt.Sprintf("web%d", i), deploymentAvailable),
				writeStatus(w, jobs, fmt.Sprintf("job%d", i), started))
		}
		targets = append(targets, applyForWait(t, w, manifest.String())...)
	}
	if len(targets) != 20 {
		t.Fatalf("%d targets, want 20", len(targets))
	}
	counter := newRequestCounter()
	ctrl := startController(counter, append([]func() error{pause(200 * time.Millisecond)}, writes...)...)
	results := waitOrdered(t, counter.client(t), targets, 30*time.Second, nil)
	ctrl.check(t)
	for _, r := range results {
		if !r.Ready() {
			t.Errorf("%s -n %s: %s (%s: %s), want Current", r.Target.Ref(), r.Target.Namespace, r.Status, r.Reason, r.Message)
		}
	}
	watches, lists := counter.counts()
	t.Logf("20 objects, 4 (resource, namespace) pairs: %d WATCH and %d LIST requests: %v", len(watches), lists, watches)
	const pairs, margin = 4, 1
	if len(watches) > pairs+margin || lists > pairs+margin {
		t.Errorf("%d WATCH and %d LIST requests for %d (resource, namespace) pairs, want at most %d", len(watches), lists, pairs, pairs+margin)
	}
}

// TestWaitSurvivesABrokenWatch: the connection of the first WATCH drops
// (a load balancer's idle timeout, an API server restarting); the wait
// reads again and still sees the deployment become available. A watch
// broken by an error makes client-go's informer LIST again (a backoff of
// 0.8-1.6 s first), then WATCH if the object is not final yet: one more
// LIST, and a second WATCH or none, depending on when the status lands.
func TestWaitSurvivesABrokenWatch(t *testing.T) {
	requireCluster(t)
	w := newWorld(t, kapplyTool, nil)
	targets := applyForWait(t, w, deploymentYAML("web"))
	counter := newRequestCounter()
	var broken atomic.Bool
	cfg := rest.CopyConfig(cluster.Config)
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			counter.mu.Lock()
			isWatch := req.URL.Query().Get("watch") == "true"
			if isWatch {
				counter.watches = append(counter.watches, req.URL.Path)
			} else if req.Method == http.MethodGet {
				counter.lists++
			}
			counter.mu.Unlock()
			resp, err := next.RoundTrip(req)
			if isWatch && err == nil && broken.CompareAndSwap(false, true) {
				time.AfterFunc(300*time.Millisecond, func() { _ = resp.Body.Close() })
			}
			return resp, err
		})
	})
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		time.Sleep(time.Second)
		done <- writeStatus(w, deployments, "web", deploymentAvailable)()
	}()
	results := waitOrdered(t, client, targets, 30*time.Second, nil)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if r := results[0]; !r.Ready() {
		t.Errorf("deployment: %s (%s: %s), want Current after the watch broke", r.Status, r.Reason, r.Message)
	}
	watches, lists := counter.counts()
	t.Logf("%d WATCH, %d LIST requests", len(watches), lists)
	if len(watches)+lists < 3 || len(watches) > 3 || lists > 2 {
		t.Errorf("%d WATCH and %d LIST requests, want a second WATCH or LIST after the first broke (and at most one more LIST)", len(watches), lists)
	}
}
