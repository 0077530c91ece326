package plan

import (
	"os"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// clusterScopedKinds are the cluster-scoped kinds the order tests use
// (the lead's caller asks discovery instead).
var clusterScopedKinds = map[string]bool{
	"Namespace": true, "ClusterRole": true, "ClusterRoleBinding": true, "CustomResourceDefinition": true,
	"ValidatingWebhookConfiguration": true, "MutatingWebhookConfiguration": true, "APIService": true,
	"ClusterIssuer": true, "IngressClass": true, "PriorityClass": true, "StorageClass": true,
	"ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true, "PersistentVolume": true,
}

// orderNodes reads a YAML stream into OrderNodes: the resource guessed as
// apimachinery does, a namespaced object without namespace in "default".
func orderNodes(t testing.TB, stream string) []OrderNode {
	t.Helper()
	var nodes []OrderNode
	for _, doc := range strings.Split("\n"+stream, "\n---") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("reading %q: %v", doc, err)
		}
		if obj == nil {
			continue
		}
		nodes = append(nodes, orderNode(t, obj))
	}
	return nodes
}

func orderNode(t testing.TB, obj map[string]any) OrderNode {
	t.Helper()
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		t.Fatalf("apiVersion %q: %v", apiVersion, err)
	}
	meta0, _ := obj["metadata"].(map[string]any)
	name, _ := meta0["name"].(string)
	ns, _ := meta0["namespace"].(string)
	namespaced := !clusterScopedKinds[kind]
	if !namespaced {
		ns = ""
	} else if ns == "" {
		ns = "default"
	}
	plural, _ := meta.UnsafeGuessKindToResource(gv.WithKind(kind))
	return OrderNode{
		ID:         ID{Group: gv.Group, Version: gv.Version, Kind: kind, Namespace: ns, Name: name},
		Resource:   plural.Resource,
		Namespaced: namespaced,
		Object:     obj,
	}
}

func readFileNodes(t testing.TB, paths ...string) []OrderNode {
	t.Helper()
	var nodes []OrderNode
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Skipf("real-world corpus not here: %v", err)
		}
		nodes = append(nodes, orderNodes(t, string(data))...)
	}
	return nodes
}

// stepsOf names each node's step: "Kind/name" → step.
func stepsOf(nodes []OrderNode, o Ordering) map[string]int {
	m := make(map[string]int, len(nodes))
	for i, n := range nodes {
		m[n.ID.Kind+"/"+n.ID.Name] = o.Waves[i]
	}
	return m
}

// logSteps prints the steps, their gates and each object's reason.
func logSteps(t testing.TB, nodes []OrderNode, o Ordering) {
	t.Helper()
	for s, g := range o.Gates {
		t.Logf("step %d: gate ready=%v webhooks=%v apiservices=%v", s, g.Ready, g.Webhooks, g.APIServices)
		for i, n := range nodes {
			if o.Waves[i] == s {
				t.Logf("    %s  (%s)", n.ID, o.Reasons[i])
			}
		}
	}
	for _, w := range o.Warnings {
		t.Logf("warning: %s", w)
	}
}
