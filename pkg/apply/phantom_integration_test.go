package apply_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapply/kapply/pkg/apply"
	kcluster "github.com/kapply/kapply/pkg/cluster"
	"github.com/kapply/kapply/pkg/plan"
)

// phantomObjects each make a non-empty plan on every re-apply — the file
// asks for what the server defaults or drops — and change nothing live.
// %[1]s is the test's namespace, %[2]s a name unique to it.
const phantomObjects = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: zero-min-ready}
spec:
  minReadySeconds: 0
  selector: {matchLabels: {app: zero}}
  template:
    metadata: {labels: {app: zero}}
    spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: %[2]s}
webhooks:
- name: never.kapply.dev
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Ignore
  clientConfig: {url: "https://127.0.0.1:1/never"}
  namespaceSelector: {matchLabels: {kapply.dev/never: "true"}}
  rules:
  - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: port-only}
spec:
  podSelector: {}
  ingress:
  - ports: [{port: 8082}]
---
apiVersion: v1
kind: Secret
metadata: {name: string-data}
stringData: {password: hunter2}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: empty-data}
data: {}
`

// TestNoPhantomChanges: objects whose files keep asking for what the
// server defaults or drops (minReadySeconds: 0, a scope the server fills
// into an atomic list of rules, a protocol it fills into NetworkPolicy
// ports, stringData it folds into data, an empty map it drops) re-apply as
// unchanged, and a server dry run — what diff shows — finds nothing to do.
// kubectl reports every one of them configured on every apply.
func TestNoPhantomChanges(t *testing.T) {
	requireCluster(t)
	w := newWorld(t, kapplyTool, nil)
	path := writeManifest(t, w, fmt.Sprintf(phantomObjects, w.ns, "phantom-"+w.ns))
	for _, ev := range mustKapply(t, w, path) {
		if ev.Outcome != apply.Created {
			t.Fatalf("first apply: %s %s", apply.ObjectRef(ev.Object), ev.Outcome)
		}
	}
	for _, ev := range mustKapply(t, w, path) {
		if ev.Item == nil || ev.Item.Action == plan.Unchanged {
			t.Errorf("%s: the plan is empty; this case no longer needs the server's word", apply.ObjectRef(ev.Object))
		}
		if ev.Outcome != apply.Unchanged {
			t.Errorf("re-apply: %s %s, want unchanged", apply.ObjectRef(ev.Object), ev.Outcome)
		}
	}
	for _, ev := range serverDryRun(t, w, path) {
		if ev.Outcome != apply.Unchanged {
			t.Errorf("server dry run: %s %s, want unchanged", apply.ObjectRef(ev.Object), ev.Outcome)
		}
	}
	if !haveKubectl(t) {
		return
	}
	out := runKubectl(t, w, "apply", "-f", path)
	if n := strings.Count(out, " configured"); n != 5 {
		t.Errorf("kubectl re-apply: %d objects configured, want all 5 (the noise kapply removes)\n%s", n, out)
	}
}

// TestRealChangeIsStillConfigured: the server's word does not hide a real
// change, in an apply or a server dry run.
func TestRealChangeIsStillConfigured(t *testing.T) {
	requireCluster(t)
	w := newWorld(t, kapplyTool, nil)
	mustKapply(t, w, writeManifest(t, w, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: \"1\"}\n"))
	path := writeManifest(t, w, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: \"2\"}\n")
	if ev := serverDryRun(t, w, path)[0]; ev.Outcome != apply.Configured {
		t.Errorf("server dry run of a change: %s", ev.Outcome)
	}
	if ev := mustKapply(t, w, path)[0]; ev.Outcome != apply.Configured {
		t.Errorf("apply of a change: %s", ev.Outcome)
	}
	wantField(t, get(t, w, objRef{configMaps, "c"}), "2", "data", "a")
}

// TestControllerStatusWriteIsNotAChange: a controller writes the object's
// status between kapply's read and its patch (a new CRD becoming
// Established), so the resourceVersion moves although kapply's patch stored
// nothing: still unchanged, client-side and server-side.
func TestControllerStatusWriteIsNotAChange(t *testing.T) {
	requireCluster(t)
	w := newWorld(t, kapplyTool, nil)
	deployment := strings.SplitN(phantomObjects, "---", 2)[0]
	path := writeManifest(t, w, deployment)
	mustKapply(t, w, path)
	generation := 0
	writeStatus := func() error {
		generation++
		body := fmt.Sprintf(`{"status":{"observedGeneration":%d}}`, generation)
		_, err := dyn(t).Resource(deployments).Namespace(w.ns).Patch(context.Background(), "zero-min-ready",
			types.MergePatchType, []byte(body), metav1.PatchOptions{FieldManager: otherWriter}, "status")
		return err
	}
	isPatch := func(req *http.Request) bool {
		return req.Method == http.MethodPatch && !strings.HasSuffix(req.URL.Path, "/status")
	}
	for _, serverSide := range []bool{false, true} {
		opts := fileRun{path, apply.Options{Write: apply.WriteOptions{Namespace: w.ns, ServerSide: serverSide}}}
		// A first run in the mode: switching to server-side rewrites the
		// record and the ownership, a change of its own.
		kapplyRunOpts(t, w, opts)
		rec := &patchRecorder{match: isPatch, beforeFirst: writeStatus}
		events := kapplyRunOptsWith(t, w, opts, rec.wrap)
		if rec.hookErr != nil {
			t.Fatalf("server-side %v: status write: %v", serverSide, rec.hookErr)
		}
		if len(rec.recorded()) == 0 {
			t.Fatalf("server-side %v: no patch sent, the status write never happened", serverSide)
		}
		if ev := events[0]; ev.Outcome != apply.Unchanged {
			t.Errorf("server-side %v: %s %v, want unchanged", serverSide, ev.Outcome, ev.Err)
		}
	}
}

// TestServerSideDryRunOfAChangeIsConfigured: a server dry run never moves
// the resourceVersion, so only the returned object tells a change.
func TestServerSideDryRunOfAChangeIsConfigured(t *testing.T) {
	requireCluster(t)
	w := newWorld(t, kapplyTool, nil)
	serverSideRun(t, w, writeManifest(t, w, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: \"1\"}\n"))
	path := writeManifest(t, w, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: \"2\"}\n")
	opts := fileRun{path, apply.Options{Write: apply.WriteOptions{Namespace: w.ns, ServerSide: true}, DryRun: kcluster.ServerDryRun}}
	events := kapplyRunOpts(t, w, opts)
	if ev := events[0]; ev.Outcome != apply.Configured {
		t.Errorf("server-side dry run of a change: %s %v, want configured", ev.Outcome, ev.Err)
	}
	wantField(t, get(t, w, objRef{configMaps, "c"}), "1", "data", "a")
}

func serverDryRun(t *testing.T, w *world, path string) []apply.Event {
	t.Helper()
	events := kapplyRunOpts(t, w, fileRun{path, apply.Options{Write: apply.WriteOptions{Namespace: w.ns}, DryRun: kcluster.ServerDryRun}})
	failOnFailures(t, events)
	return events
}
