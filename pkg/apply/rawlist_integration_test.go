package apply_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"

	"github.com/kapply/kapply/pkg/apply"
	kcluster "github.com/kapply/kapply/pkg/cluster"
	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/load"
)

// writeRecorder records every POST and PATCH: method, path and query,
// content headers and body.
type writeRecorder struct {
	mu    sync.Mutex
	calls []string
	// paths are those of every request.
	paths []string
}

func (w *writeRecorder) wrap(c *rest.Config) *rest.Config {
	c = rest.CopyConfig(c)
	c.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			w.mu.Lock()
			w.paths = append(w.paths, req.URL.Path)
			w.mu.Unlock()
			if req.Method != http.MethodPost && req.Method != http.MethodPatch {
				return next.RoundTrip(req)
			}
			body, err := io.ReadAll(req.Body)
			if err != nil {
				return nil, err
			}
			req = req.Clone(req.Context())
			req.Body = io.NopCloser(bytes.NewReader(body))
			w.mu.Lock()
			w.calls = append(w.calls, fmt.Sprintf("%s %s\nContent-Type: %s\nAccept: %s\n%s",
				req.Method, req.URL.RequestURI(), req.Header.Get("Content-Type"), req.Header.Get("Accept"), body))
			w.mu.Unlock()
			return next.RoundTrip(req)
		})
	})
	return c
}

func (w *writeRecorder) sorted() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Sorted(slices.Values(w.calls))
}

// runWrites applies path with opts, with the Lists client (raw LISTs and
// deletes) or, withoutLists, through the dynamic client alone, and returns
// the events and the writes sent.
func runWrites(t *testing.T, w *world, path string, opts apply.Options, withoutLists bool) ([]apply.Event, []string) {
	t.Helper()
	events, rec := runRecorded(t, w, path, opts, withoutLists)
	return events, rec.sorted()
}

func runRecorded(t *testing.T, w *world, path string, opts apply.Options, withoutLists bool) ([]apply.Event, *writeRecorder) {
	t.Helper()
	rec := &writeRecorder{}
	flags := genericclioptions.NewConfigFlags(true)
	flags.KubeConfig = &cluster.Kubeconfig
	flags.CacheDir = &w.cacheDir
	flags.WrapConfigFn = rec.wrap
	in := loadInput(flags, load.Files{Filenames: []string{path}}, "")
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	mapper, err := flags.ToRESTMapper()
	if err != nil {
		t.Fatal(err)
	}
	dc, err := flags.ToDiscoveryClient()
	if err != nil {
		t.Fatal(err)
	}
	clients, err := apply.NewClients(cfg, mapper, dc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if withoutLists {
		clients.Lists = nil
	}
	events, err := apply.NewApplier(clients).Apply(context.Background(), in, opts)
	if err != nil {
		t.Fatal(err)
	}
	return events, rec
}

// comparable is what an event says, without what differs between two
// writes of one object (a dry-run create's uid and time, managedFields'
// times).
func comparable(ev apply.Event) string {
	result := "<nil>"
	if ev.Result != nil {
		obj := ev.Result.DeepCopy()
		unstructured.RemoveNestedField(obj.Object, "metadata", "uid")
		unstructured.RemoveNestedField(obj.Object, "metadata", "creationTimestamp")
		unstructured.RemoveNestedField(obj.Object, "metadata", "managedFields")
		result = toJSON(obj.Object)
	}
	errText := "<nil>"
	if ev.Err != nil {
		errText = ev.Err.Error()
	}
	return fmt.Sprintf("%s %s: %s, err %s, warnings %q\n%s", ev.Object.GetKind(), ev.Object.GetName(), ev.Outcome, errText, ev.Warnings, result)
}

// TestWritesWithTheListsClientAreTheDynamicClients: a run with the Lists
// client (its LISTs decoded once) sends, request for request, the creates
// and patches of a run through the dynamic client alone, and gives the
// same events: results, server errors and warnings, client-side refusals
// — on namespaced and cluster-scoped kinds, a Secret, a create and an
// update, in a server dry run. (Creates and patches went through the
// Lists client too until they were measured under DESIGN's bar.)
func TestWritesWithTheListsClientAreTheDynamicClients(t *testing.T) {
	requireCluster(t)
	w := newWorld(t, kapplyTool, nil)
	clusterRole := "kapply-rawlist-" + w.ns
	clusterRoles := k8sschema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	client := dyn(t)
	t.Cleanup(func() {
		_ = client.Resource(clusterRoles).Delete(context.Background(), clusterRole, metav1.DeleteOptions{})
	})
	manifest := func(value string) string {
		return fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: cm, annotations: {a: "<&>"}}
data: {k: %[1]q, number: "1", s: "é\u2028"}
---
apiVersion: v1
kind: Secret
metadata: {name: sec}
stringData: {password: %[1]q}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: app, image: "nginx:%[1]s", unknownField: x, ports: [{containerPort: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: svc}
spec: {clusterIP: None, ports: [{port: 80, name: %[1]q}]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: %[2]s}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [get]}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: refused}
data: {"bad key!": x}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: escaping, namespace: ".."}
`, value, clusterRole)
	}
	path := writeManifest(t, w, manifest("one"))
	// A new object's redacted record has a random salt: plain records
	// make the two creates' bodies comparable.
	dryRun := apply.Options{Write: apply.WriteOptions{Namespace: w.ns, FieldValidation: "Warn", SecretRecord: lastapplied.PlainSecrets}, DryRun: kcluster.ServerDryRun}
	compare := func(step string) {
		t.Helper()
		rawEvents, rawWrites := runWrites(t, w, path, dryRun, false)
		dynEvents, dynWrites := runWrites(t, w, path, dryRun, true)
		if len(rawWrites) < 5 {
			t.Fatalf("%s: %d writes recorded: %q", step, len(rawWrites), rawWrites)
		}
		if !reflect.DeepEqual(rawWrites, dynWrites) {
			t.Errorf("%s: the writes differ:\n%s", step, lineDiff(strings.Join(dynWrites, "\n\n"), strings.Join(rawWrites, "\n\n")))
		}
		if len(rawEvents) != len(dynEvents) {
			t.Fatalf("%s: %d events through the Lists client, %d through the dynamic client", step, len(rawEvents), len(dynEvents))
		}
		for i := range rawEvents {
			if got, want := comparable(rawEvents[i]), comparable(dynEvents[i]); got != want {
				t.Errorf("%s: event %d:\n%s", step, i, lineDiff(want, got))
			}
		}
	}
	compare("create")
	real := apply.Options{Write: apply.WriteOptions{Namespace: w.ns}}
	if events, _ := runWrites(t, w, path, real, false); failedCount(events) != 2 {
		t.Fatalf("the real create: want 2 failures (refused, escaping), events %v", events)
	}
	path = writeManifest(t, w, manifest("two"))
	compare("update")
}

func failedCount(events []apply.Event) int {
	n := 0
	for _, ev := range events {
		if ev.Outcome == apply.Failed {
			n++
		}
	}
	return n
}

// TestNoPathEscapesItsNamespace: objects in namespace ".." — enough of
// them to be read by a LIST — fail with the dynamic client's words, and no
// request is sent for them: the request path, cleaned, would name another
// resource (/api/v1/namespaces/../configmaps is every namespace's).
func TestNoPathEscapesItsNamespace(t *testing.T) {
	requireCluster(t)
	w := newWorld(t, kapplyTool, nil)
	var manifest strings.Builder
	for i := range 6 {
		fmt.Fprintf(&manifest, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%d, namespace: \"..\"}\ndata: {a: b}\n", i)
	}
	path := writeManifest(t, w, manifest.String())
	for _, withoutLists := range []bool{false, true} {
		events, rec := runRecorded(t, w, path, apply.Options{Write: apply.WriteOptions{Namespace: w.ns}}, withoutLists)
		for _, p := range rec.paths {
			if strings.Contains(p, "configmaps") {
				t.Errorf("without Lists %v: a request was sent to %s", withoutLists, p)
			}
		}
		for _, ev := range events {
			if ev.Outcome != apply.Failed || ev.Err == nil || !strings.Contains(ev.Err.Error(), `invalid namespace "..": [may not be '..']`) {
				t.Errorf("without Lists %v: %s: %s, %v", withoutLists, apply.ObjectRef(ev.Object), ev.Outcome, ev.Err)
			}
		}
	}
}
