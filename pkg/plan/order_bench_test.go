package plan

import (
	"strconv"
	"testing"
)

// plainConfigMaps are n ConfigMaps with labels and an unrelated
// annotation, as a plain apply sends them.
func plainConfigMaps(n int) []OrderNode {
	nodes := make([]OrderNode, n)
	for i := range nodes {
		name := "cm-" + strconv.Itoa(i)
		nodes[i] = OrderNode{
			ID:         ID{Version: "v1", Kind: "ConfigMap", Namespace: "app", Name: name},
			Resource:   "configmaps",
			Namespaced: true,
			Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{
				"name": name, "namespace": "app", "labels": map[string]any{"app": "web"},
				"annotations": map[string]any{"team": "a"},
			}, "data": map[string]any{"k": "v"}},
		}
	}
	return nodes
}

// TestOrderPlainRunAllocates: 10,000 plain objects are one step, computed
// with the result's own allocations only (the two slices, one gate).
func TestOrderPlainRunAllocates(t *testing.T) {
	nodes := plainConfigMaps(10000)
	var o Ordering
	allocs := testing.AllocsPerRun(20, func() {
		var err error
		if o, err = Order(nodes, nil); err != nil {
			t.Fatal(err)
		}
	})
	if len(o.Gates) != 1 || len(o.Waves) != 10000 || o.Waves[9999] != 0 || len(o.Reasons) != 10000 {
		t.Fatalf("got %d steps", len(o.Gates))
	}
	if allocs > 3 {
		t.Fatalf("%v allocations for 10,000 plain objects, want at most 3", allocs)
	}
}

func BenchmarkOrderPlain10k(b *testing.B) {
	nodes := plainConfigMaps(10000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Order(nodes, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOrderWaves10k: the slow path at 10,000 objects, with waves, a
// depends-on chain and a webhook intercepting every ConfigMap.
func BenchmarkOrderWaves10k(b *testing.B) {
	nodes := plainConfigMaps(10000)
	for i := range nodes[:100] {
		meta := nodes[i].Object["metadata"].(map[string]any)
		meta["annotations"] = map[string]any{SyncWaveAnnotation: strconv.Itoa(i % 5)}
		if i > 0 && i%5 == 0 {
			meta["annotations"].(map[string]any)[DependsOnAnnotation] = "/namespaces/app/ConfigMap/cm-" + strconv.Itoa(i-5)
		}
	}
	nodes = append(nodes, orderNodes(b, guard("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", configMapRule)+"---"+hookServer)...)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Order(nodes, nil); err != nil {
			b.Fatal(err)
		}
	}
}
