package check_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/check"
)

// env is what a test talks to the cluster with, as one user.
type env struct {
	t        *testing.T
	cfg      *rest.Config
	dynamic  dynamic.Interface
	mapper   *restmapper.DeferredDiscoveryRESTMapper
	clients  check.Clients
	warnings *warningRecorder
}

func newEnv(t *testing.T, cfg *rest.Config) *env {
	t.Helper()
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 500, 1000 // kapply's defaults (--qps, --burst)
	recorder := &warningRecorder{}
	cfg.WarningHandler = recorder
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, cfg: cfg, dynamic: dyn, mapper: mapper, warnings: recorder,
		clients: check.Clients{Kube: kube, Dynamic: dyn, Mapper: mapper}}
}

func userEnv(t *testing.T, kubeconfig string) *env {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return newEnv(t, cfg)
}

func (e *env) applier() *apply.Applier {
	e.t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(e.cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	cached := memory.NewMemCacheClient(dc)
	clients, err := apply.NewClients(e.cfg, restmapper.NewDeferredDiscoveryRESTMapper(cached), cached, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return apply.NewApplier(clients)
}

func (e *env) resource(obj *unstructured.Unstructured) dynamic.ResourceInterface {
	e.t.Helper()
	gvk := obj.GroupVersionKind()
	mapping, err := e.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		e.t.Fatalf("mapping %s: %v", gvk, err)
	}
	if obj.GetNamespace() == "" {
		return e.dynamic.Resource(mapping.Resource)
	}
	return e.dynamic.Resource(mapping.Resource).Namespace(obj.GetNamespace())
}

// create creates objects, deleting the cluster-scoped ones when the test
// ends (its namespace takes the others).
func (e *env) create(objects []*unstructured.Unstructured) {
	e.t.Helper()
	for _, obj := range objects {
		if _, err := e.resource(obj).Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
			e.t.Fatalf("creating %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
		if obj.GetNamespace() == "" {
			e.t.Cleanup(func() { _ = e.resource(obj).Delete(context.Background(), obj.GetName(), metav1.DeleteOptions{}) })
		}
	}
}

// readCorpus reads a file of testdata/corpus with NAMESPACE replaced.
func readCorpus(t *testing.T, name, namespace string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return readYAML(t, string(bytes.ReplaceAll(data, []byte("NAMESPACE"), []byte(namespace))))
}

// readYAML reads the objects of a YAML stream.
func readYAML(t *testing.T, data string) []*unstructured.Unstructured {
	t.Helper()
	decoder := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		if err := decoder.Decode(&obj.Object); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatalf("reading YAML: %v", err)
		}
		if len(obj.Object) > 0 {
			out = append(out, obj)
		}
	}
}

func labelNamespace(t *testing.T, e *env, name string, labels map[string]string) {
	t.Helper()
	ctx := context.Background()
	kube := e.clients.Kube
	ns, err := kube.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	for k, v := range labels {
		ns.Labels[k] = v
	}
	if _, err := kube.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitDenied waits until the server denies a dry-run create of obj with a
// message naming want: the API server's policy informers have caught up.
func (e *env) waitDenied(obj *unstructured.Unstructured, want string) {
	e.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, err := e.resource(obj).Create(context.Background(), obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil && strings.Contains(err.Error(), want) {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("the server did not start denying %s by %s: %v", obj.GetName(), want, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

var configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// warningRecorder keeps the warnings of the server's answers.
type warningRecorder struct {
	mu   sync.Mutex
	list []string
}

func (w *warningRecorder) HandleWarningHeader(code int, agent, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

func (w *warningRecorder) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.list
	w.list = nil
	return out
}
