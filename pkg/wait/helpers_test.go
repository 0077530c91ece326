package wait_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/kapply/kapply/internal/testcluster"
	"github.com/kapply/kapply/pkg/wait"
)

var (
	deploymentMapping = &meta.RESTMapping{
		Resource:         schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
		GroupVersionKind: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"},
		Scope:            meta.RESTScopeNamespace,
	}
	configMapMapping = &meta.RESTMapping{
		Resource:         schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		GroupVersionKind: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
		Scope:            meta.RESTScopeNamespace,
	}
)

// Status of a Deployment as its controller would write it (the test
// cluster runs no controller manager).
const (
	deploymentProgressing = `{"observedGeneration":1,"replicas":1,"updatedReplicas":1,"unavailableReplicas":1,"conditions":[
		{"type":"Available","status":"False","reason":"MinimumReplicasUnavailable","message":"Deployment does not have minimum availability."},
		{"type":"Progressing","status":"True","reason":"ReplicaSetUpdated","message":"ReplicaSet is progressing."}]}`
	deploymentAvailable = `{"observedGeneration":1,"replicas":1,"updatedReplicas":1,"readyReplicas":1,"availableReplicas":1,"unavailableReplicas":null,"conditions":[
		{"type":"Available","status":"True","reason":"MinimumReplicasAvailable","message":"Deployment has minimum availability."},
		{"type":"Progressing","status":"True","reason":"NewReplicaSetAvailable","message":"ReplicaSet has successfully progressed."}]}`
)

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

// env is one test's namespace and an admin client.
type env struct {
	t      *testing.T
	ns     string
	client dynamic.Interface
}

func newEnv(t *testing.T) *env {
	t.Helper()
	testcluster.Require(t, cluster)
	client, err := dynamic.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, ns: cluster.Namespace(t), client: client}
}

// create creates the object of manifest and returns it as stored.
func (e *env) create(mapping *meta.RESTMapping, manifest string) *unstructured.Unstructured {
	e.t.Helper()
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &obj.Object); err != nil {
		e.t.Fatal(err)
	}
	created, err := e.client.Resource(mapping.Resource).Namespace(e.ns).Create(context.Background(), obj, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("creating %s: %v", obj.GetName(), err)
	}
	return created
}

// target is what to wait for: the object as created.
func (e *env) target(mapping *meta.RESTMapping, obj *unstructured.Unstructured) wait.Target {
	return wait.Target{Mapping: mapping, Namespace: e.ns, Name: obj.GetName(), UID: obj.GetUID()}
}

// writeStatus is a controller's write of a status (a JSON merge patch of
// the status subresource).
func (e *env) writeStatus(mapping *meta.RESTMapping, name, statusJSON string) error {
	_, err := e.client.Resource(mapping.Resource).Namespace(e.ns).Patch(context.Background(), name, types.MergePatchType,
		[]byte(`{"status":`+statusJSON+`}`), metav1.PatchOptions{}, "status")
	if err != nil {
		return fmt.Errorf("writing the status of %s: %w", name, err)
	}
	return nil
}

// watchCounter is a client of the test cluster that counts the WATCH
// requests it sends and closes watching on the first one: the wait has
// begun.
type watchCounter struct {
	watches  atomic.Int64
	watching chan struct{}
	once     sync.Once
}

func newWatchCounter() *watchCounter { return &watchCounter{watching: make(chan struct{})} }

func (c *watchCounter) client(t *testing.T) dynamic.Interface {
	t.Helper()
	cfg := rest.CopyConfig(cluster.Config)
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if req.URL.Query().Get("watch") == "true" {
				c.watches.Add(1)
				c.once.Do(func() { close(c.watching) })
			}
			return next.RoundTrip(req)
		})
	})
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// afterWatching runs steps in turn, off the test's goroutine, once the
// wait watches; the channel gives the first error.
func (c *watchCounter) afterWatching(steps ...func() error) <-chan error {
	done := make(chan error, 1)
	go func() {
		select {
		case <-c.watching:
		case <-time.After(30 * time.Second):
			done <- fmt.Errorf("the wait never opened a watch")
			return
		}
		for _, step := range steps {
			if err := step(); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	return done
}

func pause(d time.Duration) func() error {
	return func() error { time.Sleep(d); return nil }
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func logResults(t *testing.T, results []wait.Result) {
	t.Helper()
	for _, r := range results {
		t.Logf("%s: %s %s: %s (timed out: %v)", r.Target.Ref(), r.Status, r.Reason, r.Message, r.TimedOut)
	}
}
