package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kapply/kapply/internal/testcluster"
)

var jobsResource = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}

func waitDeployment(name string) string {
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

const availableStatus = `{"observedGeneration":1,"replicas":1,"updatedReplicas":1,"readyReplicas":1,"availableReplicas":1,"conditions":[
	{"type":"Available","status":"True","reason":"MinimumReplicasAvailable","message":"Deployment has minimum availability."},
	{"type":"Progressing","status":"True","reason":"NewReplicaSetAvailable","message":"ReplicaSet has successfully progressed."}]}`

// playController writes each object's status, through the status
// subresource, once apply has created it: the test cluster runs no
// controllers. It returns a channel with its error, or nil when done.
func playController(client dynamic.Interface, ns string, writes map[schema.GroupVersionResource]map[string]string) chan error {
	done := make(chan error, 1)
	go func() {
		ctx := context.Background()
		deadline := time.Now().Add(30 * time.Second)
		for gvr, byName := range writes {
			for name, status := range byName {
				rc := client.Resource(gvr).Namespace(ns)
				for {
					_, err := rc.Get(ctx, name, metav1.GetOptions{})
					if err == nil {
						break
					}
					if time.Now().After(deadline) {
						done <- fmt.Errorf("%s/%s never created: %w", gvr.Resource, name, err)
						return
					}
					time.Sleep(50 * time.Millisecond)
				}
				body := fmt.Sprintf(`{"status":%s}`, status)
				if _, err := rc.Patch(ctx, name, types.MergePatchType, []byte(body), metav1.PatchOptions{}, "status"); err != nil {
					done <- fmt.Errorf("writing the status of %s/%s: %w", gvr.Resource, name, err)
					return
				}
			}
		}
		done <- nil
	}()
	return done
}

func TestApplyWaitReportsReadyFailedAndTimedOut(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{
		"web.yaml":   waitDeployment("web"),
		"stuck.yaml": waitDeployment("stuck"),
		"job.yaml": `apiVersion: batch/v1
kind: Job
metadata: {name: migrate}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox, command: ["false"]}]
`,
	})
	now := time.Now().UTC().Format(time.RFC3339)
	done := playController(dynClient(t), ns, map[schema.GroupVersionResource]map[string]string{
		deployments: {"web": availableStatus},
		jobsResource: {"migrate": fmt.Sprintf(`{"startTime":%[1]q,"failed":1,"conditions":[
			{"type":"FailureTarget","status":"True","reason":"BackoffLimitExceeded","message":"Job has reached the specified backoff limit","lastTransitionTime":%[1]q},
			{"type":"Failed","status":"True","reason":"BackoffLimitExceeded","message":"Job has reached the specified backoff limit","lastTransitionTime":%[1]q}]}`, now)},
	})
	r := kapply(t, "apply", "-f", dir, "-n", ns, "--wait", "--timeout", "4s")
	if err := <-done; err != nil {
		t.Fatalf("controller: %v", err)
	}
	t.Logf("stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	if r.code != exitFailed {
		t.Errorf("exit %d, want %d", r.code, exitFailed)
	}
	if !strings.Contains(r.stdout, "deployment.apps/web ready\n") {
		t.Errorf("stdout lacks the ready line of web")
	}
	for _, want := range []string{
		"job.batch/migrate failed: BackoffLimitExceeded: Job has reached the specified backoff limit\n",
		"deployment.apps/stuck not ready after 4s (InProgress): ",
		"wait: 1 ready, 1 failed, 1 not ready after 4s\n",
		"error: 2 of 3 object(s) not ready: ",
		"job.batch/migrate (failed: BackoffLimitExceeded)",
		"deployment.apps/stuck (timed out: ",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
}

func TestApplyWaitAllReadyAndDryRun(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{
		"web.yaml": waitDeployment("web"),
		"cm.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {a: b}\n",
	})
	// A dry run waits for nothing.
	r := kapply(t, "apply", "-f", dir, "-n", ns, "--wait", "--timeout", "30s", "--dry-run=server")
	if r.code != 0 || strings.Contains(r.stdout+r.stderr, "ready") {
		t.Errorf("dry run: exit %d, want 0 and no wait:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	done := playController(dynClient(t), ns, map[schema.GroupVersionResource]map[string]string{deployments: {"web": availableStatus}})
	r = kapply(t, "apply", "-f", dir, "-n", ns, "--wait", "--timeout", "30s")
	if err := <-done; err != nil {
		t.Fatalf("controller: %v", err)
	}
	if r.code != 0 {
		t.Fatalf("exit %d, want 0:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"configmap/cfg created\n", "deployment.apps/web created\n", "configmap/cfg ready\n", "deployment.apps/web ready\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "wait: 2 ready, 0 failed, 0 not ready after 30s\n") {
		t.Errorf("stderr lacks the wait's summary:\n%s", r.stderr)
	}
}

func TestStatusShowsHealth(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"web.yaml": waitDeployment("web"), "api.yaml": waitDeployment("api")})
	if r := kapply(t, "apply", "-f", dir, "-n", ns); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.stderr)
	}
	done := playController(dynClient(t), ns, map[schema.GroupVersionResource]map[string]string{deployments: {"web": availableStatus}})
	if err := <-done; err != nil {
		t.Fatalf("controller: %v", err)
	}
	text := kapply(t, "status", "-f", dir, "-n", ns)
	for _, want := range []string{
		"deployment.apps/web: in step with the last apply; health: Current\n",
		"deployment.apps/api: in step with the last apply; health: InProgress (LessReplicas: Replicas: 0/1)\n",
	} {
		if !strings.Contains(text.stdout, want) {
			t.Errorf("status lacks %q:\n%s", want, text.stdout)
		}
	}
	if text.code != 0 {
		t.Errorf("status: exit %d, want 0 (health does not change it)\n%s", text.code, text.stderr)
	}
	js := kapply(t, "status", "-f", dir, "-n", ns, "-o", "json")
	var statuses []struct {
		Object string
		Health struct{ Status, Reason string }
	}
	if err := json.Unmarshal([]byte(js.stdout), &statuses); err != nil {
		t.Fatalf("status -o json: %v\n%s", err, js.stdout)
	}
	got := map[string]string{}
	for _, s := range statuses {
		got[s.Object] = s.Health.Status + "/" + s.Health.Reason
	}
	if got["deployment.apps/web"] != "Current/" || got["deployment.apps/api"] != "InProgress/LessReplicas" {
		t.Errorf("status -o json health: %v\n%s", got, js.stdout)
	}
}

// TestApplyWaitReportsAnObjectDeletedWhileWaiting: another client deletes
// the Deployment apply --wait waits for — once the wait's watch is open,
// or before its first LIST. The wait reports it at once, as failed
// ("deployment.apps/gone failed: deleted while waiting"), instead of
// waiting out --timeout, and the run exits 1; the ConfigMap is ready.
func TestApplyWaitReportsAnObjectDeletedWhileWaiting(t *testing.T) {
	testcluster.Require(t, cluster)
	for _, when := range []string{"watching", "before the first list"} {
		t.Run(when, func(t *testing.T) {
			ns := cluster.Namespace(t)
			dir := writeFiles(t, map[string]string{
				"gone.yaml": waitDeployment("gone"),
				"cm.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {a: b}\n",
			})
			deleteGone := func() {
				if err := dynClient(t).Resource(deployments).Namespace(ns).Delete(context.Background(), "gone", metav1.DeleteOptions{}); err != nil {
					t.Errorf("deleting gone as another client: %v", err)
				}
			}
			proxy := cluster.StartProxy(t)
			var created atomic.Bool
			var once sync.Once
			proxy.SetRule(func(req *http.Request, _ int64) testcluster.Fault {
				if !strings.HasSuffix(req.URL.Path, "/namespaces/"+ns+"/deployments") {
					return testcluster.Pass
				}
				watching := req.URL.Query().Get("watch") == "true"
				switch {
				case req.Method == http.MethodPost:
					created.Store(true)
				case req.Method == http.MethodGet && created.Load() && watching && when == "watching":
					// Once the watch is open: the deletion comes as an event.
					once.Do(func() { time.AfterFunc(300*time.Millisecond, deleteGone) })
				case req.Method == http.MethodGet && created.Load() && !watching && when != "watching":
					once.Do(deleteGone)
				}
				return testcluster.Pass
			})
			start := time.Now()
			r := kapplyVia(t, proxy.Kubeconfig, "apply", "-f", dir, "-n", ns, "--wait", "--timeout=20s")
			took := time.Since(start)
			t.Logf("exit %d after %s\nstdout:\n%s\nstderr:\n%s", r.code, took.Round(time.Millisecond), r.stdout, r.stderr)
			if r.code != exitFailed || took > 10*time.Second {
				t.Errorf("exit %d after %s, want 1 well before the 20s timeout", r.code, took.Round(time.Millisecond))
			}
			if !strings.Contains(r.stdout, "configmap/cfg ready\n") {
				t.Errorf("stdout lacks the ready line of cfg")
			}
			for _, want := range []string{
				"deployment.apps/gone failed: deleted while waiting\n",
				"wait: 1 ready, 1 failed, 0 not ready after 20s\n",
				"error: 1 of 2 object(s) not ready: deployment.apps/gone (failed: deleted while waiting)\n",
			} {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr lacks %q", want)
				}
			}
		})
	}
}
