package apply_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/kapply/kapply/internal/testcluster"
	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/load"
	"github.com/kapply/kapply/pkg/plan"
)

// longLived is one Applier kept for many runs, as a controller or a
// service keeps it, built as kapply builds it (kubectl's disk caches).
type longLived struct {
	applier *apply.Applier
	getter  genericclioptions.RESTClientGetter
	ns, dir string
}

// newLongLived builds an Applier from kubeconfig with a fresh cache
// directory.
func newLongLived(t *testing.T, kubeconfig string) *longLived {
	t.Helper()
	return newLongLivedOn(t, newGetter(kubeconfig, tempDir(t)), cluster.Namespace(t))
}

// newGetter is kapply's kubeconfig flags with the given cache directory.
func newGetter(kubeconfig, cacheDir string) *genericclioptions.ConfigFlags {
	flags := genericclioptions.NewConfigFlags(true)
	flags.KubeConfig = &kubeconfig
	flags.CacheDir = &cacheDir
	return flags
}

// newLongLivedOn builds an Applier from getter, whose mapper and discovery
// client may already hold answers.
func newLongLivedOn(t *testing.T, getter genericclioptions.RESTClientGetter, ns string) *longLived {
	t.Helper()
	cfg, err := getter.ToRESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	mapper, err := getter.ToRESTMapper()
	if err != nil {
		t.Fatal(err)
	}
	dc, err := getter.ToDiscoveryClient()
	if err != nil {
		t.Fatal(err)
	}
	clients, err := apply.NewClients(cfg, mapper, dc, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &longLived{applier: apply.NewApplier(clients), getter: getter, ns: ns, dir: tempDir(t)}
}

// run applies manifest (a file of the run's own) and returns the events.
func (l *longLived) run(t *testing.T, manifest string) []apply.Event {
	t.Helper()
	path, err := os.CreateTemp(l.dir, "run-*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := path.WriteString(manifest); err != nil {
		t.Fatal(err)
	}
	if err := path.Close(); err != nil {
		t.Fatal(err)
	}
	in := loadInput(l.getter, load.Files{Filenames: []string{filepath.Clean(path.Name())}}, "")
	events, err := l.applier.Apply(context.Background(), in, apply.Options{Write: apply.WriteOptions{Namespace: l.ns}})
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	return events
}

// mustRun is run failing the test on any failed object.
func (l *longLived) mustRun(t *testing.T, manifest string) []apply.Event {
	t.Helper()
	events := l.run(t, manifest)
	failOnFailures(t, events)
	return events
}

// keyedKind is a CRD of its own group whose spec.rules is a keyed list
// (x-kubernetes-list-type: map, keys [name]): a run that plans without its
// schema replaces the list whole.
type keyedKind struct{ group string }

func newKeyedKind(t *testing.T) keyedKind {
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	return keyedKind{group: name + ".longlived.kapply.test"}
}

func (k keyedKind) gvr() k8sschema.GroupVersionResource {
	return k8sschema.GroupVersionResource{Group: k.group, Version: "v1", Resource: "routes"}
}

func (k keyedKind) crd() string {
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: routes.%[1]s}
spec:
  group: %[1]s
  names: {kind: Route, plural: routes, singular: route}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              rules:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    backend: {type: string}
`, k.group)
}

// atomicCRD is crd without the list's keys: its rules are replaced whole.
func (k keyedKind) atomicCRD() string {
	return strings.Replace(k.crd(), `                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
`, "", 1)
}

// route is the custom resource r with rule a pointing at backend, and b.
func (k keyedKind) route(backend string) string {
	return fmt.Sprintf(`apiVersion: %s/v1
kind: Route
metadata: {name: r}
spec:
  rules:
  - {name: a, backend: %s}
  - {name: b, backend: b1}
`, k.group, backend)
}

// createCRD creates the CRD as another client would (not through kapply)
// and waits until it is established.
func (k keyedKind) createCRD(t *testing.T) {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(k.crd()), &obj.Object); err != nil {
		t.Fatal(err)
	}
	if _, err := dyn(t).Resource(crdsGVR).Create(context.Background(), obj, metav1.CreateOptions{FieldManager: otherWriter}); err != nil {
		t.Fatalf("another client creating the CRD: %v", err)
	}
	k.awaitEstablished(t)
}

var crdsGVR = k8sschema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// awaitEstablished waits until the server serves the CRD's kind; the
// server may publish its OpenAPI schema later.
func (k keyedKind) awaitEstablished(t *testing.T) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		crd, err := dyn(t).Resource(crdsGVR).Get(ctx, "routes."+k.group, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		conditions, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
		for _, c := range conditions {
			if c, ok := c.(map[string]any); ok && c["type"] == "Established" && c["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("waiting for CRD routes.%s to be established: %v", k.group, err)
	}
}

// controllerAdds is a controller's write: it appends rule ctrl to the
// route's keyed list.
func (k keyedKind) controllerAdds(t *testing.T, ns string) {
	t.Helper()
	patch := `[{"op":"add","path":"/spec/rules/-","value":{"name":"ctrl","backend":"c1"}}]`
	_, err := dyn(t).Resource(k.gvr()).Namespace(ns).Patch(context.Background(), "r", types.JSONPatchType, []byte(patch), metav1.PatchOptions{FieldManager: otherWriter})
	if err != nil {
		t.Fatalf("the controller adding a rule: %v", err)
	}
}

// assertMergedByKey checks that the file's change of rule a reached the
// server and the controller's rule survived it.
func (k keyedKind) assertMergedByKey(t *testing.T, ns, backend string) {
	t.Helper()
	live, err := dyn(t).Resource(k.gvr()).Namespace(ns).Get(context.Background(), "r", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rules, _, _ := unstructured.NestedSlice(live.Object, "spec", "rules")
	got := map[string]any{}
	for _, r := range rules {
		if r, ok := r.(map[string]any); ok {
			got[fmt.Sprint(r["name"])] = r["backend"]
		}
	}
	want := map[string]any{"a": backend, "b": "b1", "ctrl": "c1"}
	if toJSON(got) != toJSON(want) {
		t.Errorf("rules after the apply: got %s, want %s (the controller's rule kept: merged by key, not replaced whole)", toJSON(got), toJSON(want))
	}
}

// settings is a ConfigMap; applied twice, the second run plans a patch,
// and so reads the server's OpenAPI documents.
const settings = `apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {mode: fast}
`

// objectsRuns are a long-lived Applier's first runs: objects created, then
// patched, before any CRD of the test exists.
func (l *longLived) objectsRuns(t *testing.T) {
	t.Helper()
	l.mustRun(t, settings)
	wantOutcomes(t, l.mustRun(t, strings.Replace(settings, "fast", "safe", 1)), apply.Configured)
}

// TestLongLivedApplierCRDAppliedLater: one Applier applies objects, then a
// CRD, then its custom resource, each in a run of its own; after a
// controller adds a rule, the next run merges the keyed list by key. An
// Applier that kept its first run's OpenAPI listing planned the custom
// resource without a schema and replaced the list whole, dropping the
// controller's rule.
func TestLongLivedApplierCRDAppliedLater(t *testing.T) {
	requireCluster(t)
	k := newKeyedKind(t)
	l := newLongLived(t, cluster.Kubeconfig)
	l.objectsRuns(t)
	l.mustRun(t, k.crd())
	k.awaitEstablished(t)
	l.mustRun(t, k.route("a1"))
	k.controllerAdds(t, l.ns)
	wantOutcomes(t, l.mustRun(t, k.route("a2")), apply.Configured)
	k.assertMergedByKey(t, l.ns, "a2")
}

// TestLongLivedApplierCRDChangedByAnother: one Applier applies a CRD whose
// list is atomic; another client then gives the list keys (a newer
// release of the operator). The Applier's later runs plan with the CRD the
// server has, not the one an earlier run applied, and merge by key.
func TestLongLivedApplierCRDChangedByAnother(t *testing.T) {
	requireCluster(t)
	k := newKeyedKind(t)
	l := newLongLived(t, cluster.Kubeconfig)
	l.objectsRuns(t)
	l.mustRun(t, k.atomicCRD())
	k.awaitEstablished(t)
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(k.crd()), &obj.Object); err != nil {
		t.Fatal(err)
	}
	_, err := dyn(t).Resource(crdsGVR).Apply(context.Background(), obj.GetName(), obj, metav1.ApplyOptions{FieldManager: otherWriter, Force: true})
	if err != nil {
		t.Fatalf("another client changing the CRD: %v", err)
	}
	awaitOpenAPIHas(t, k.group, "x-kubernetes-list-map-keys")
	l.mustRun(t, k.route("a1"))
	k.controllerAdds(t, l.ns)
	wantOutcomes(t, l.mustRun(t, k.route("a2")), apply.Configured)
	k.assertMergedByKey(t, l.ns, "a2")
}

// TestLongLivedApplierCRDScopeChanged: another client replaces a CRD an
// Applier has used by a cluster-scoped one; the Applier's next run maps
// the kind afresh, where an answer kept from the earlier run sent the
// custom resource to a namespace's URL, which the server does not serve.
func TestLongLivedApplierCRDScopeChanged(t *testing.T) {
	requireCluster(t)
	k := newKeyedKind(t)
	l := newLongLived(t, cluster.Kubeconfig)
	l.mustRun(t, k.crd()+"---\n"+k.route("a1"))
	crds := dyn(t).Resource(crdsGVR)
	name := "routes." + k.group
	if err := crds.Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("another client deleting the CRD: %v", err)
	}
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := crds.Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("waiting for the CRD to go: %v", err)
	}
	clusterScoped := keyedKind{group: k.group}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(strings.Replace(k.crd(), "scope: Namespaced", "scope: Cluster", 1)), &obj.Object); err != nil {
		t.Fatal(err)
	}
	if _, err := crds.Create(context.Background(), obj, metav1.CreateOptions{FieldManager: otherWriter}); err != nil {
		t.Fatalf("another client creating the cluster-scoped CRD: %v", err)
	}
	clusterScoped.awaitEstablished(t)
	wantOutcomes(t, l.mustRun(t, k.route("a1")), apply.Created)
	if _, err := dyn(t).Resource(k.gvr()).Get(context.Background(), "r", metav1.GetOptions{}); err != nil {
		t.Errorf("the cluster-scoped route: %v", err)
	}
}

// TestLongLivedApplierCRDCreatedByAnother: between two runs of one Applier,
// another client creates a CRD; the Applier's next runs map its kind and
// merge its keyed list by key.
func TestLongLivedApplierCRDCreatedByAnother(t *testing.T) {
	requireCluster(t)
	k := newKeyedKind(t)
	l := newLongLived(t, cluster.Kubeconfig)
	l.objectsRuns(t)
	k.createCRD(t)
	l.mustRun(t, k.route("a1"))
	k.controllerAdds(t, l.ns)
	wantOutcomes(t, l.mustRun(t, k.route("a2")), apply.Configured)
	k.assertMergedByKey(t, l.ns, "a2")
}

// TestUnknownKindRefreshedInTheRun: the mapper and the disk cache of
// discovery were filled before another client created a CRD; an Applier
// built on them (its first run, which does not reset the mapper, as in
// kapply's one run per process) meets the CRD's kind as unknown and finds
// it by refreshing discovery within the run.
func TestUnknownKindRefreshedInTheRun(t *testing.T) {
	requireCluster(t)
	k := newKeyedKind(t)
	getter := newGetter(cluster.Kubeconfig, tempDir(t))
	newLongLivedOn(t, getter, cluster.Namespace(t)).objectsRuns(t)
	k.createCRD(t)
	// A second Applier on the same mapper (answers in memory), and a
	// third on the same disk cache only (kapply's next process).
	cacheDir := *getter.CacheDir
	for _, l := range []*longLived{
		newLongLivedOn(t, getter, cluster.Namespace(t)),
		newLongLivedOn(t, newGetter(cluster.Kubeconfig, cacheDir), cluster.Namespace(t)),
	} {
		wantOutcomes(t, l.mustRun(t, k.route("a1")), apply.Created)
		k.controllerAdds(t, l.ns)
		l.mustRun(t, k.route("a2"))
		k.assertMergedByKey(t, l.ns, "a2")
	}
}

// TestSchemaFromTheServersCRD: the server serves a CRD's kind but its
// OpenAPI v3 listing does not hold the CRD's group yet (the server
// publishes it a moment later; here a transport wrapper takes it out of
// every listing). The run reads the schema from the server's CRD and
// merges by key, where it planned without a schema and replaced the list
// whole.
func TestSchemaFromTheServersCRD(t *testing.T) {
	requireCluster(t)
	k := newKeyedKind(t)
	k.createCRD(t)
	getter := newGetter(cluster.Kubeconfig, tempDir(t))
	var stripped atomic.Int32
	getter.WrapConfigFn = func(c *rest.Config) *rest.Config {
		c.Wrap(func(next http.RoundTripper) http.RoundTripper {
			return roundTripFunc(func(req *http.Request) (*http.Response, error) {
				resp, err := next.RoundTrip(req)
				if err != nil || req.URL.Path != "/openapi/v3" || resp.StatusCode != http.StatusOK {
					return resp, err
				}
				stripped.Add(1)
				return withoutPath(resp, "apis/"+k.group+"/v1")
			})
		})
		return c
	}
	l := newLongLivedOn(t, getter, cluster.Namespace(t))
	l.mustRun(t, k.route("a1"))
	k.controllerAdds(t, l.ns)
	wantOutcomes(t, l.mustRun(t, k.route("a2")), apply.Configured)
	k.assertMergedByKey(t, l.ns, "a2")
	if stripped.Load() == 0 {
		t.Error("no OpenAPI listing went through the wrapper")
	}
}

// withoutPath is resp, an OpenAPI v3 listing, without path.
func withoutPath(resp *http.Response, path string) (*http.Response, error) {
	body, err := io.ReadAll(resp.Body)
	if closeErr := resp.Body.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return nil, err
	}
	var listing map[string]map[string]any
	if err := json.Unmarshal(body, &listing); err != nil {
		return nil, err
	}
	delete(listing["paths"], path)
	if body, err = json.Marshal(listing); err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Del("Content-Length")
	return resp, nil
}

// TestOpenAPIFailureIsNotKept: the server fails every OpenAPI request of
// one run; that run fails its objects (a plan without the schema would
// replace the keyed list whole), and the same Applier's next run plans
// with the schema. An Applier that kept the failure failed every later run
// too.
func TestOpenAPIFailureIsNotKept(t *testing.T) {
	requireCluster(t)
	k := newKeyedKind(t)
	setup := newLongLived(t, cluster.Kubeconfig)
	setup.mustRun(t, k.crd())
	k.awaitEstablished(t)
	awaitOpenAPI(t, k.group)
	setup.mustRun(t, k.route("a1"))
	k.controllerAdds(t, setup.ns)

	proxy := cluster.StartProxy(t)
	var failing atomic.Bool
	failing.Store(true)
	proxy.SetRule(func(req *http.Request, _ int64) testcluster.Fault {
		if failing.Load() && strings.HasPrefix(req.URL.Path, "/openapi/v3") {
			return testcluster.Fault{Status: http.StatusInternalServerError}
		}
		return testcluster.Pass
	})
	l := newLongLived(t, proxy.Kubeconfig)
	l.ns = setup.ns
	events := l.run(t, k.route("a2"))
	if len(events) != 1 || events[0].Outcome != apply.Failed || !strings.Contains(fmt.Sprint(events[0].Err), "OpenAPI") {
		t.Fatalf("the run whose OpenAPI requests fail: got %v, want the route failed on the OpenAPI error", events)
	}
	k.assertMergedByKey(t, l.ns, "a1")
	failing.Store(false)
	// The same Applier's next plan has the schema: the controller's rule
	// is in the merged object, and the patch keeps it.
	objects, err := decodeAll(k.route("a2"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := l.applier.Plan(context.Background(), apply.Input{Objects: objects}, apply.PlanOptions{Write: apply.WriteOptions{Namespace: l.ns}})
	if err != nil || len(p.Items) != 1 {
		t.Fatalf("the plan after the failing run: %v, %v", p, err)
	}
	rules, _, _ := unstructured.NestedSlice(p.Items[0].Merged, "spec", "rules")
	if p.Items[0].Action != plan.Update || len(rules) != 3 || !strings.Contains(string(p.Items[0].Patch.Data), "ctrl") {
		t.Errorf("the plan after the failing run: %s %s, rules %v; want a patch merging by key (the controller's rule kept)", p.Items[0].Action, p.Items[0].Patch.Data, rules)
	}
	wantOutcomes(t, l.mustRun(t, k.route("a2")), apply.Configured)
	k.assertMergedByKey(t, l.ns, "a2")
}

// TestOpenAPIUnavailableRetriedInTheRun: the first OpenAPI request is
// answered 503 (no Retry-After, which client-go alone would not retry);
// the run retries it, as any request of the run, and merges the keyed list
// by key.
func TestOpenAPIUnavailableRetriedInTheRun(t *testing.T) {
	requireCluster(t)
	k := newKeyedKind(t)
	setup := newLongLived(t, cluster.Kubeconfig)
	setup.mustRun(t, k.crd())
	k.awaitEstablished(t)
	awaitOpenAPI(t, k.group)
	setup.mustRun(t, k.route("a1"))
	k.controllerAdds(t, setup.ns)

	proxy := cluster.StartProxy(t)
	var failed atomic.Bool
	proxy.SetRule(func(req *http.Request, _ int64) testcluster.Fault {
		if strings.HasPrefix(req.URL.Path, "/openapi/v3") && failed.CompareAndSwap(false, true) {
			return testcluster.Fault{Status: http.StatusServiceUnavailable}
		}
		return testcluster.Pass
	})
	l := newLongLived(t, proxy.Kubeconfig)
	l.ns = setup.ns
	wantOutcomes(t, l.mustRun(t, k.route("a2")), apply.Configured)
	if proxy.Count("status") != 1 {
		t.Errorf("503 answers: got %d, want 1", proxy.Count("status"))
	}
	k.assertMergedByKey(t, l.ns, "a2")
}

// TestConcurrentRunsOfOneApplier: runs of one Applier overlap (run with
// -race): each has its own answers, and each merges its keyed list by key.
func TestConcurrentRunsOfOneApplier(t *testing.T) {
	requireCluster(t)
	k := newKeyedKind(t)
	l := newLongLived(t, cluster.Kubeconfig)
	l.objectsRuns(t)
	k.createCRD(t)
	namespaces := []string{cluster.Namespace(t), cluster.Namespace(t), cluster.Namespace(t)}
	for round, backend := range []string{"a1", "a2"} {
		var wg sync.WaitGroup
		events := make([][]apply.Event, len(namespaces))
		for i, ns := range namespaces {
			wg.Go(func() {
				objects, err := decodeAll(k.route(backend) + "---\n" + settings)
				if err != nil {
					t.Error(err)
					return
				}
				events[i], err = l.applier.Apply(context.Background(), apply.Input{Objects: objects}, apply.Options{Write: apply.WriteOptions{Namespace: ns}})
				if err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		for i, ns := range namespaces {
			failOnFailures(t, events[i])
			if round == 0 {
				k.controllerAdds(t, ns)
			} else {
				k.assertMergedByKey(t, ns, backend)
			}
		}
	}
}

// decodeAll reads a multi-document manifest into objects.
func decodeAll(manifest string) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	for doc := range strings.SplitSeq(manifest, "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			return nil, err
		}
		objs = append(objs, u)
	}
	return objs, nil
}

// awaitOpenAPI waits until the server publishes the OpenAPI v3 document of
// group's v1.
func awaitOpenAPI(t *testing.T, group string) {
	t.Helper()
	awaitOpenAPIHas(t, group, "")
}

// awaitOpenAPIHas waits until the server's OpenAPI v3 document of group's
// v1 holds text.
func awaitOpenAPIHas(t *testing.T, group, text string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		body, err := dynRESTGet(ctx, "/openapi/v3/apis/"+group+"/v1")
		return err == nil && strings.Contains(string(body), text), nil
	})
	if err != nil {
		t.Fatalf("waiting for the OpenAPI v3 document of %s to hold %q: %v", group, text, err)
	}
}

// wantOutcomes checks the outcome of every event.
func wantOutcomes(t *testing.T, events []apply.Event, want apply.Outcome) {
	t.Helper()
	for _, ev := range events {
		if ev.Outcome != want || ev.Object == nil {
			t.Errorf("%v: got %s (%v), want %s", ev.Object, ev.Outcome, ev.Err, want)
		}
	}
}

// dynRESTGet reads path from the API server directly.
func dynRESTGet(ctx context.Context, path string) ([]byte, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cluster.Config)
	if err != nil {
		return nil, err
	}
	return dc.RESTClient().Get().AbsPath(path).DoRaw(ctx)
}
