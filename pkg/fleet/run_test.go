package fleet_test

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/delete"
	"github.com/kapply/kapply/pkg/fleet"
	"github.com/kapply/kapply/pkg/plan"
)

// TestRunTwoClusters drives every operation of the library over two real
// API servers and a third context whose server refuses connections: the
// refused one fails alone, with its own exit code, and each operation's
// exit rules hold per cluster (diff's and status's 1 is no failure).
func TestRunTwoClusters(t *testing.T) {
	if len(servers) < 2 {
		t.Skip("no local API servers: run `make k8s-bin` (integration test skipped with -short)")
	}
	configs := map[string]*rest.Config{"a": servers[0].Config, "b": servers[1].Config,
		"refused": {Host: "https://127.0.0.1:1", Timeout: 5 * time.Second}}
	two := []fleet.Cluster{{Context: "a"}, {Context: "b"}}
	runOver := func(clusters []fleet.Cluster, op fleet.Operation) []fleet.Result {
		return fleet.Run(context.Background(), fleet.Config{Clusters: clusters, Options: fleet.Options{MaxParallel: 3, ClusterTimeout: time.Minute},
			Connect: func(c fleet.Cluster) (*apply.Applier, error) { return newApplier(configs[c.Context]) }, Operation: op})
	}
	in := apply.Input{Objects: objects("v1")}
	expect := func(what string, results []fleet.Result, codes ...int) {
		t.Helper()
		for i, r := range results {
			failed := r.Code >= 1 && !(r.Code == 1 && (what == "diff" || what == "status"))
			if r.Code != codes[i] || r.ClusterFailed != failed {
				t.Errorf("%s in %s: exit %d failed %v (%v), want exit %d failed %v", what, r.Context, r.Code, r.ClusterFailed, r.Err, codes[i], failed)
			}
		}
	}

	// Plan both, then execute the PlanList: each cluster its own plan.
	planned := runOver(two, fleet.Plan{Input: in, Options: apply.PlanOptions{Saved: true}})
	expect("plan", planned, 0, 0)
	set := &plan.Set{}
	for _, r := range planned {
		if r.Plan == nil || r.Created != 2 || r.Plan.Cluster.Context != r.Context {
			t.Fatalf("plan of %s: %+v, want a plan creating 2 objects named by its context", r.Context, r.Outcome)
		}
		set.Plans = append(set.Plans, plan.Entry{Context: r.Context, Plan: r.Plan})
	}
	executed := runOver(two, fleet.Execute{Plans: set, Options: apply.ExecuteOptions{Objects: in}})
	expect("execute", executed, 0, 0)
	for _, r := range executed {
		if r.Created != 2 || len(r.Events) != 2 {
			t.Errorf("execute in %s: %d created, %d events; want 2", r.Context, r.Created, len(r.Events))
		}
	}

	// In step everywhere; then a changed file differs in both (exit 1,
	// not a failure), and the refused cluster fails with exit 2.
	expect("status", runOver(two, fleet.Status{Input: in}), 0, 0)
	three := append(two, fleet.Cluster{Context: "refused"})
	changed := apply.Input{Objects: objects("v2")}
	diffs := runOver(three, fleet.Diff{Input: changed, Options: apply.PlanOptions{ServerDryRun: true}})
	expect("diff", diffs, 1, 1, 2)
	if diffs[0].Configured != 1 || diffs[0].Unchanged != 1 {
		t.Errorf("diff in a: %+v, want 1 configured, 1 unchanged", diffs[0].Counts)
	}

	// Apply the change; the refused cluster fails alone.
	applied := runOver(three, fleet.Apply{Input: changed})
	expect("apply", applied, 0, 0, 1)
	if applied[0].Configured != 1 || applied[1].Configured != 1 || applied[2].Err == nil {
		t.Errorf("apply: %+v / %+v / %v; want 1 configured in each, an error for refused", applied[0].Counts, applied[1].Counts, applied[2].Err)
	}

	// Delete the ConfigMaps (the Namespace stays: no controller removes it).
	cms := apply.Input{Objects: changed.Objects[1:]}
	deleted := runOver(two, fleet.Delete{Input: cms, Options: delete.Options{Wait: true, Timeout: time.Minute}})
	expect("delete", deleted, 0, 0)
	status := runOver(two, fleet.Status{Input: cms})
	expect("status", status, 1, 1)
	for _, r := range status {
		if r.Deleted != 0 || len(r.Statuses) != 1 || r.Statuses[0].State != apply.StateMissing {
			t.Errorf("status in %s after delete: %+v, want the ConfigMap missing", r.Context, r.Statuses)
		}
	}
}

// objects are a Namespace and a ConfigMap whose value is value.
func objects(value string) []*unstructured.Unstructured {
	return []*unstructured.Unstructured{
		{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "fleet-two"}}},
		{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "settings", "namespace": "fleet-two"},
			"data":     map[string]any{"k": value}}},
	}
}
