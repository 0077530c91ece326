package apply_test

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/kapply/kapply/pkg/apply"
)

// ExampleApplier applies objects a program builds — no kubeconfig, no files
// — to a cluster, twice: the second run finds nothing to change. Here the
// cluster is the test API server; a controller would pass its own
// rest.Config.
func ExampleApplier() {
	applier, err := newExampleApplier(cluster.Config)
	if err != nil {
		fmt.Println(err)
		return
	}
	objects := []*unstructured.Unstructured{
		{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "example"}}},
		{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "settings", "namespace": "example"},
			"data":     map[string]any{"mode": "fast"}}},
	}
	for range 2 {
		events, err := applier.Apply(context.Background(), apply.Input{Objects: objects}, apply.Options{})
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, ev := range events {
			fmt.Println(apply.ObjectRef(ev.Object), ev.Outcome, ev.Err)
		}
	}
	// Output:
	// namespace/example created <nil>
	// configmap/settings -n example created <nil>
	// namespace/example unchanged <nil>
	// configmap/settings -n example unchanged <nil>
}

// newExampleApplier builds an Applier from a rest.Config, with discovery
// cached in memory for the REST mapping and the schemas.
func newExampleApplier(cfg *rest.Config) (*apply.Applier, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	cached := memory.NewMemCacheClient(dc)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(cached)
	clients, err := apply.NewClients(cfg, mapper, cached, nil)
	if err != nil {
		return nil, err
	}
	return apply.NewApplier(clients), nil
}

// ExampleApplier_longLived keeps one Applier for many runs, as a
// controller does. Each run asks the server afresh about kinds and
// schemas, so a CRD installed after the first run gives its keyed list a
// schema: the next runs merge it by key, and the rule a controller added
// stays.
func ExampleApplier_longLived() {
	applier, err := newExampleApplier(cluster.Config)
	if err != nil {
		fmt.Println(err)
		return
	}
	run := func(manifest string) {
		objects, err := decodeAll(manifest)
		if err == nil {
			var events []apply.Event
			events, err = applier.Apply(context.Background(), apply.Input{Objects: objects}, apply.Options{Write: apply.WriteOptions{Namespace: "example-long-lived"}})
			for _, ev := range events {
				fmt.Println(apply.ObjectRef(ev.Object), ev.Outcome, ev.Err)
			}
		}
		if err != nil {
			fmt.Println(err)
		}
	}
	routes := keyedKind{group: "example.kapply.test"}
	run("apiVersion: v1\nkind: Namespace\nmetadata: {name: example-long-lived}\n")
	run(routes.crd() + "---\n" + routes.route("a1"))
	// A controller adds a rule.
	client, err := dynamic.NewForConfig(cluster.Config)
	if err != nil {
		fmt.Println(err)
		return
	}
	rule := `[{"op":"add","path":"/spec/rules/-","value":{"name":"ctrl","backend":"c1"}}]`
	route := client.Resource(routes.gvr()).Namespace("example-long-lived")
	if _, err := route.Patch(context.Background(), "r", types.JSONPatchType, []byte(rule), metav1.PatchOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	run(routes.route("a2"))
	live, err := route.Get(context.Background(), "r", metav1.GetOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	rules, _, _ := unstructured.NestedSlice(live.Object, "spec", "rules")
	for _, r := range rules {
		fmt.Println(r.(map[string]any)["name"], r.(map[string]any)["backend"])
	}
	// Output:
	// namespace/example-long-lived created <nil>
	// customresourcedefinition.apiextensions.k8s.io/routes.example.kapply.test created <nil>
	// route.example.kapply.test/r -n example-long-lived created <nil>
	// route.example.kapply.test/r -n example-long-lived configured <nil>
	// a a2
	// b b1
	// ctrl c1
}
