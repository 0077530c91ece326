package apply_test

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/load"
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
		events, err := applier.Apply(context.Background(), apply.Input{Objects: load.FromUnstructured(objects)}, apply.Options{})
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, ev := range events {
			fmt.Println(ev.Object.Ref(), ev.Outcome, ev.Err)
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
