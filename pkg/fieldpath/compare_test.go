package fieldpath

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func decode(t *testing.T, text string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(text), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func texts(paths []Path) string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = p.String()
	}
	return strings.Join(out, " ")
}

// TestCompareObjectsDepths: one pair of objects compared at each depth, as
// plan changes (ByField), diff's counts and events (ByPosition) and ignore
// classes (ByKey) compare them.
func TestCompareObjectsDepths(t *testing.T) {
	live := decode(t, `
metadata: {name: a, resourceVersion: "1"}
spec:
  replicas: 1
  args: [a, b]
  ports: [{port: 80, protocol: TCP}]
`)
	after := decode(t, `
metadata: {name: a, resourceVersion: "2", labels: {app: web}}
spec:
  replicas: 2
  args: [a, c]
  ports: [{port: 80, protocol: UDP}, {port: 81}]
  template: {x: 1}
`)
	skip := func(p Path) bool { return IsBookkeeping(p, EveryWrite) }
	for depth, want := range map[Depth]string{
		ByField:    "metadata.labels spec.args spec.ports spec.replicas spec.template",
		ByPosition: "metadata.labels spec.args[1] spec.ports spec.replicas spec.template",
		ByKey:      "metadata.labels.app spec.args spec.ports[port=80].protocol spec.ports[port=81].port spec.replicas spec.template.x",
	} {
		got := CompareObjects(live, after, CompareOptions{Depth: depth, Skip: skip})
		if texts(got.Paths()) != want {
			t.Errorf("depth %d: %s\nwant %s", depth, texts(got.Paths()), want)
		}
	}
	c := CompareObjects(live, after, CompareOptions{Depth: ByField, Skip: skip})
	if texts(c.Added()) != "metadata.labels spec.template" || texts(c.Modified()) != "spec.args spec.ports spec.replicas" || c.Removed() != nil {
		t.Errorf("added %s, modified %s, removed %s", texts(c.Added()), texts(c.Modified()), texts(c.Removed()))
	}
	if !CompareObjects(live, live, CompareOptions{}).IsSame() || CompareObjects(live, after, CompareOptions{}).IsSame() {
		t.Error("IsSame")
	}
}

// TestCompareObjectsWholeValues: values that are not both maps are one
// difference at the root (a patch body that is a list); numbers compare
// by value; a map one side lacks counts its fields only ByKey.
func TestCompareObjectsWholeValues(t *testing.T) {
	if got := CompareObjects([]any{1}, map[string]any{}, CompareOptions{}); len(got) != 1 || got[0].Path != nil {
		t.Errorf("list against map: %v", got)
	}
	if got := CompareObjects(map[string]any{"n": int64(1)}, map[string]any{"n": 1.0}, CompareOptions{}); !got.IsSame() {
		t.Errorf("1 and 1.0: %v", got)
	}
	var created map[string]any
	after := decode(t, "metadata: {name: a, labels: {x: y}}\ndata: {k: v}")
	if got := CompareObjects(created, after, CompareOptions{Depth: ByPosition}); texts(got.Paths()) != "data metadata" {
		t.Errorf("created, by position: %s", texts(got.Paths()))
	}
	if got := CompareObjects(created, after, CompareOptions{Depth: ByKey}); texts(got.Paths()) != "data.k metadata.labels.x metadata.name" {
		t.Errorf("created, by key: %s", texts(got.Paths()))
	}
	if CompareObjects(nil, nil, CompareOptions{}).Paths() != nil {
		t.Error("nil against nil differs")
	}
}
