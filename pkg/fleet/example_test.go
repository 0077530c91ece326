package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/fleet"
)

// Apply the same objects to two clusters, the first as a canary: the
// second starts only once the first has succeeded.
func ExampleRun() {
	configs := map[string]*rest.Config{"eu-1": servers[0].Config, "us-1": servers[1].Config}
	objects := []*unstructured.Unstructured{
		{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "example-fleet"}}},
		{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "settings", "namespace": "example-fleet"},
			"data":     map[string]any{"mode": "fast"}}},
	}
	results := fleet.Run(context.Background(), fleet.Config{
		Clusters: []fleet.Cluster{{Context: "eu-1"}, {Context: "us-1"}},
		Options:  fleet.Options{MaxParallel: 2, Canary: 1, ClusterTimeout: time.Minute},
		Connect: func(c fleet.Cluster) (*apply.Applier, error) {
			return newApplier(configs[c.Context])
		},
		Operation: fleet.Apply{Input: apply.Input{Objects: objects}},
	})
	for _, r := range results {
		fmt.Printf("%s wave %d: %d created, exit %d, error %v\n", r.Context, r.Wave, r.Created, r.Code, r.Err)
	}
	// Output:
	// eu-1 wave 0: 2 created, exit 0, error <nil>
	// us-1 wave 1: 2 created, exit 0, error <nil>
}

// A program's own operation, in waves: a canary, then waves of two; a
// failed cluster fails only itself.
func ExampleFunc() {
	clusters := []fleet.Cluster{{Context: "eu-1"}, {Context: "eu-2"}, {Context: "us-1"}, {Context: "us-2"}}
	results := fleet.Run(context.Background(), fleet.Config{
		Clusters: clusters,
		Options:  fleet.Options{MaxParallel: 2, Canary: 1, WaveSize: 2, ClusterTimeout: time.Minute},
		Connect:  func(fleet.Cluster) (*apply.Applier, error) { return nil, nil }, // Do needs none
		Operation: fleet.Func{Do: func(ctx context.Context, c fleet.Cluster, _ *apply.Applier) fleet.Outcome {
			if c.Context == "us-2" {
				return fleet.Outcome{Code: 1, Err: errors.New("forbidden")}
			}
			return fleet.Outcome{Counts: fleet.Counts{Created: 3}}
		}},
	})
	for _, r := range results {
		fmt.Printf("%s wave %d: %d created, failed %v, error %v\n", r.Context, r.Wave, r.Created, r.ClusterFailed, r.Err)
	}
	// Output:
	// eu-1 wave 0: 3 created, failed false, error <nil>
	// eu-2 wave 1: 3 created, failed false, error <nil>
	// us-1 wave 1: 3 created, failed false, error <nil>
	// us-2 wave 2: 0 created, failed true, error forbidden
}

// newApplier builds an Applier from a rest.Config, with discovery cached
// in memory for the Applier's life.
func newApplier(cfg *rest.Config) (*apply.Applier, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	cached := memory.NewMemCacheClient(dc)
	clients, err := apply.NewClients(cfg, restmapper.NewDeferredDiscoveryRESTMapper(cached), cached, nil)
	if err != nil {
		return nil, err
	}
	return apply.NewApplier(clients), nil
}
