package wait_test

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kapply/kapply/pkg/wait"
)

// ExampleReady waits for a ConfigMap (ready once it exists), then for its
// deletion.
func ExampleReady() {
	client, err := dynamic.NewForConfig(cluster.Config) // the test cluster; any *rest.Config
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	namespaces := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "wait-example"}}}
	if _, err := client.Resource(namespaces).Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	mapping := &meta.RESTMapping{
		Resource:         schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		GroupVersionKind: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
		Scope:            meta.RESTScopeNamespace,
	}
	configMaps := client.Resource(mapping.Resource).Namespace("wait-example")
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "settings"}}}
	created, err := configMaps.Create(ctx, cm, metav1.CreateOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	targets := []wait.Target{{Mapping: mapping, Namespace: "wait-example", Name: "settings", UID: created.GetUID()}}
	opts := wait.Options{Timeout: 30 * time.Second, OnResult: func(_ int, r wait.Result) {
		fmt.Printf("%s: %s, ready %v, deleted %v\n", r.Target.Ref(), r.Status, r.Ready(), r.Deleted())
	}}
	if _, err := wait.Ready(ctx, client, targets, opts); err != nil {
		fmt.Println(err)
		return
	}
	if err := configMaps.Delete(ctx, "settings", metav1.DeleteOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	if _, err := wait.Deleted(ctx, client, targets, opts); err != nil {
		fmt.Println(err)
	}
	// Output:
	// configmap/settings: Current, ready true, deleted false
	// configmap/settings: NotFound, ready false, deleted true
}
