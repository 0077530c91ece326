package plan

import (
	"errors"
	"testing"

	"sigs.k8s.io/yaml"
)

// FuzzOrder: any annotation values and any webhook configuration either
// order the run (every node in a step, steps dense, Gates[0] empty, each
// depends-on after what it names, declared waves in their order) or are
// refused with an *OrderError; never a panic.
func FuzzOrder(f *testing.F) {
	f.Add("1", "/namespaces/app/ConfigMap/b", "-1", "", "webhooks: [{name: w, "+configMapRule+"}]")
	f.Add("x", "/namespaces/app/ConfigMap/a", "0", "/namespaces/app/ConfigMap/a", "webhooks: [{name: w, objectSelector: {matchLabels: {a: b}}}]")
	f.Add("", "apps/Deployment", "2", "/namespaces/app/ConfigMap/b,/namespaces/app/ConfigMap/b", "webhooks: 3")
	f.Add("0", "/namespaces/sys/Service/hook", "0", "", "webhooks: [{name: w, clientConfig: {service: {namespace: sys, name: hook}}, rules: [{operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*']}]}]")
	f.Fuzz(func(t *testing.T, waveA, depsA, waveB, depsB, webhookYAML string) {
		nodes := orderNodes(t, hookServer)
		nodes = append(nodes, fuzzConfigMap(t, "a", waveA, depsA), fuzzConfigMap(t, "b", waveB, depsB))
		var cfg map[string]any
		if yaml.Unmarshal([]byte(webhookYAML), &cfg) == nil && cfg != nil {
			cfg["apiVersion"], cfg["kind"], cfg["metadata"] = "admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", map[string]any{"name": "fuzz"}
			nodes = append(nodes, orderNode(t, cfg))
		}
		o, err := Order(nodes, nil)
		if err != nil {
			var oe *OrderError
			if !errors.As(err, &oe) || len(oe.Problems) == 0 {
				t.Fatalf("a refusal that is not an OrderError: %v", err)
			}
			return
		}
		checkOrdering(t, nodes, o)
	})
}

func fuzzConfigMap(t *testing.T, name, wave, deps string) OrderNode {
	ann := map[string]any{}
	if wave != "" {
		ann[SyncWaveAnnotation] = wave
	}
	if deps != "" {
		ann[DependsOnAnnotation] = deps
	}
	return orderNode(t, map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "app", "annotations": ann}})
}

func checkOrdering(t *testing.T, nodes []OrderNode, o Ordering) {
	t.Helper()
	if len(o.Waves) != len(nodes) || len(o.Reasons) != len(nodes) || len(o.Gates) == 0 {
		t.Fatalf("%d waves, %d reasons, %d gates for %d nodes", len(o.Waves), len(o.Reasons), len(o.Gates), len(nodes))
	}
	used := make([]bool, len(o.Gates))
	for _, w := range o.Waves {
		if w < 0 || w >= len(o.Gates) {
			t.Fatalf("step %d outside 0..%d", w, len(o.Gates)-1)
		}
		used[w] = true
	}
	for s, u := range used {
		if !u {
			t.Fatalf("step %d holds no object", s)
		}
	}
	if g := o.Gates[0]; len(g.Ready)+len(g.Webhooks)+len(g.APIServices) != 0 {
		t.Fatalf("step 0 has a gate: %+v", g)
	}
	o2 := newOrderer(nodes, nil)
	o2.readWaves()
	o2.readDependsOn()
	for v := range nodes {
		for _, e := range o2.preds[v] {
			if o.Waves[e.from] >= o.Waves[v] {
				t.Fatalf("%s (step %d) depends on %s (step %d)", nodes[v].ID, o.Waves[v], nodes[e.from].ID, o.Waves[e.from])
			}
		}
		for u := range nodes {
			if o2.waveOf[u] < o2.waveOf[v] && o.Waves[u] >= o.Waves[v] {
				t.Fatalf("%s of an earlier sync-wave is not in an earlier step than %s", nodes[u].ID, nodes[v].ID)
			}
		}
	}
}
