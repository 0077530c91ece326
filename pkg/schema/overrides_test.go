package schema

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestParseMergeKey(t *testing.T) {
	cases := []struct {
		in   string
		want Override
	}{
		{"Widget.example.com:spec.rules=name,port", Override{Group: "example.com", Kind: "Widget",
			Path: []string{"spec", "rules"}, List: Map, Keys: []string{"name", "port"}}},
		{"Widget.example.com/v1beta1:spec.tags:set", Override{Group: "example.com", Version: "v1beta1", Kind: "Widget",
			Path: []string{"spec", "tags"}, List: Set}},
		{"Widget.example.com:spec.rules.ports=port", Override{Group: "example.com", Kind: "Widget",
			Path: []string{"spec", "rules", "ports"}, List: Map, Keys: []string{"port"}}},
		{"Thing:items:atomic", Override{Kind: "Thing", Path: []string{"items"}, List: Atomic}},
	}
	for _, c := range cases {
		got, err := ParseMergeKey(c.in)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %+v, want %+v", c.in, got, c.want)
		}
		if got.String() != c.in {
			t.Errorf("%s: String() = %s, want the input back", c.in, got.String())
		}
	}
}

func TestParseMergeKeyErrors(t *testing.T) {
	cases := []struct{ in, want string }{
		{"Widget.example.com", "missing ':' between kind and path"},
		{"Widget.example.com:spec.rules", "missing '=KEYS' or ':set'"},
		{".example.com:spec.rules=name", `kind ""`},
		{"Widget.example.com:spec..rules=name", `path: field name 2 ""`},
		{"Widget.example.com:=name", `path: field name 1 ""`},
		{"Widget.example.com:spec.rules=", "a map list needs at least one key"},
		{"Widget.example.com:spec.rules=name,,port", `keys: field name 2 ""`},
		{"Widget.example.com:spec.rules=name,name", `keys: "name" appears twice`},
		{"Widget.example.com:spec.rules:bag", `list type "bag"`},
		{"Widget.example.com:spec.rules:map", "a map list is written PATH=KEYS"},
		// A version with a slash, or any the server could not serve, would
		// match no kind and be ignored silently.
		{"Widget.example.com/v1/x:spec=a", `version "v1/x"`},
		{"Widget.example.com/V1:spec=a", `version "V1"`},
		{"Widget.example.com/:spec=a", `version ""`},
		{"Widget.exa_mple.com:spec=a", `group "exa_mple.com"`},
	}
	for _, c := range cases {
		_, err := ParseMergeKey(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.in) {
			t.Errorf("%s: got error %v, want one quoting the input and containing %q", c.in, err, c.want)
		}
	}
}

const keysFile = `
apiVersion: kapply.dev/v1alpha1
kind: MergeKeys
mergeKeys:
- group: example.com
  kind: Widget
  path: spec.rules
  keys: [name, port]
- group: example.com
  version: v1
  kind: Widget
  path: spec.tags
  type: set
`

func TestLoadMergeKeysFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.yaml")
	if err := os.WriteFile(path, []byte(keysFile), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := LoadMergeKeysFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []Override{
		{Group: "example.com", Kind: "Widget", Path: []string{"spec", "rules"}, List: Map, Keys: []string{"name", "port"}},
		{Group: "example.com", Version: "v1", Kind: "Widget", Path: []string{"spec", "tags"}, List: Set},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestReadMergeKeysErrors(t *testing.T) {
	entry := "mergeKeys:\n- {kind: Widget, group: example.com, path: spec.rules, %s}\n"
	cases := []struct{ doc, want string }{
		{"mergeKeys: [", "parsing merge keys file keys.yaml"},
		{strings.Replace(entry, "%s", "key: [name]", 1), `unknown field "key"`},
		{strings.Replace(entry, "%s", "type: bag", 1), `mergeKeys[0] (kind "Widget", path "spec.rules"): type "bag"`},
		{strings.Replace(entry, "%s", "type: set, keys: [a]", 1), "a set list has no keys"},
		{strings.Replace(entry, "%s", "type: map", 1), "a map list needs at least one key"},
		{"mergeKeys:\n- {kind: Widget, keys: [a]}\n", "path: must name a list"},
		{"apiVersion: v1\nmergeKeys: []\n", `apiVersion "v1"`},
		{"kind: Other\nmergeKeys: []\n", `kind "Other"`},
	}
	for _, c := range cases {
		_, err := ReadMergeKeys(strings.NewReader(c.doc), "keys.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "keys.yaml") {
			t.Errorf("%q: got error %v, want one naming keys.yaml and containing %q", c.doc, err, c.want)
		}
	}
	if _, err := LoadMergeKeysFile(filepath.Join(t.TempDir(), "absent.yaml")); err == nil || !strings.Contains(err.Error(), "absent.yaml") {
		t.Errorf("missing file: got %v, want an error naming it", err)
	}
}

var crdGVK = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}

func mustOverrides(t *testing.T, flags ...string) []Override {
	t.Helper()
	out := make([]Override, 0, len(flags))
	for _, f := range flags {
		o, err := ParseMergeKey(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, o)
	}
	return out
}

func TestApplyOverridesOnUnmarkedList(t *testing.T) {
	base := widgetFromCRD(t)
	got, err := ApplyOverrides(base, crdGVK, mustOverrides(t,
		"Widget.example.com:spec.rules.ports=port",
		"Widget.example.com:spec.rules=name",
		"Widget.example.com/v2:spec.steps:set", // other version: ignored
		"Gadget.example.com:spec.rules=id",     // other kind: ignored
	))
	if err != nil {
		t.Fatal(err)
	}
	checkWant(t, got.Root, want{path: "spec.rules", typ: List, list: Map, keys: []string{"name"}})
	checkWant(t, got.Root, want{path: "spec.rules.ports", typ: List, list: Map, keys: []string{"port"}})
	checkWant(t, got.Root, want{path: "spec.steps", typ: List, list: Atomic})
	checkWant(t, base.Root, want{path: "spec.rules", typ: List, list: Atomic})
	checkWant(t, base.Root, want{path: "spec.rules.ports", typ: List, list: Atomic})
	if at(t, got.Root, "spec.tags") != at(t, base.Root, "spec.tags") {
		t.Error("spec.tags: nodes off the override paths should stay shared")
	}
}

func TestApplyOverridesCreatesUnknownPaths(t *testing.T) {
	base := widgetFromCRD(t)
	got, err := ApplyOverrides(base, crdGVK, mustOverrides(t,
		"Widget.example.com:spec.config.servers=host,port",
		"Widget.example.com:status.conditions=type",
	))
	if err != nil {
		t.Fatal(err)
	}
	checkWant(t, got.Root, want{path: "spec.config.servers", typ: List, list: Map, keys: []string{"host", "port"}})
	checkWant(t, got.Root, want{path: "status.conditions", typ: List, list: Map, keys: []string{"type"}})
	if cfg := at(t, got.Root, "spec.config"); !cfg.PreserveUnknown || at(t, got.Root, "spec.config.servers").Elem.TypeOf() != Object {
		t.Error("spec.config: want it to keep preserving unknown fields, with object elements in servers")
	}
	if status := at(t, got.Root, "status"); status.Type != Unknown || !status.PreserveUnknown {
		t.Errorf("status (not in the schema): want an Unknown node holding conditions, got %+v", *status)
	}
	if base.Root.Field("status") != nil || at(t, base.Root, "spec.config").Fields != nil {
		t.Error("ApplyOverrides changed its input graph")
	}
}

func TestApplyOverridesUnknownKind(t *testing.T) {
	got, err := ApplyOverrides(&Kind{}, crdGVK, mustOverrides(t, "Widget.example.com:spec.rules=name"))
	if err != nil {
		t.Fatal(err)
	}
	checkWant(t, got.Root, want{path: "spec.rules", typ: List, list: Map, keys: []string{"name"}})
	if same, err := ApplyOverrides(&Kind{}, crdGVK, nil); err != nil || same.Root != nil {
		t.Errorf("no overrides: got %+v, %v; want the kind unchanged", same, err)
	}
}

func TestApplyOverridesSharedDocumentGraph(t *testing.T) {
	doc := parseWidget(t)
	kind, err := doc.CustomKind(widgetGVK)
	if err != nil {
		t.Fatal(err)
	}
	gvk := widgetGVK
	if _, err := ApplyOverrides(kind, gvk, mustOverrides(t, "Widget.test.io:spec.props.anyOf=name")); err != nil {
		t.Fatal(err)
	}
	again, err := doc.CustomKind(widgetGVK)
	if err != nil {
		t.Fatal(err)
	}
	checkWant(t, again.Root, want{path: "spec.props.anyOf", typ: List, list: Atomic})
}

func TestApplyOverridesErrors(t *testing.T) {
	cases := []struct{ flag, want string }{
		{"Widget.example.com:spec.tags=name", "spec.tags holds scalars; declare it a set"},
		{"Widget.example.com:spec.byName:set", "spec.byName holds objects"},
		{"Widget.example.com:spec.selector=app", "spec.selector is of type object, not a list"},
		{"Widget.example.com:spec.port.x=a", "spec.port is a scalar"},
		{"Widget.example.com:spec.env.x=a", "spec.env is a map"},
	}
	for _, c := range cases {
		_, err := ApplyOverrides(widgetFromCRD(t), crdGVK, mustOverrides(t, c.flag))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.flag) {
			t.Errorf("%s: got %v, want an error naming the override and containing %q", c.flag, err, c.want)
		}
	}
	strategic := &Kind{Root: &Node{Type: Object}, Strategic: true}
	_, err := ApplyOverrides(strategic, crdGVK, mustOverrides(t, "Widget.example.com:spec.rules=name"))
	if err == nil || !strings.Contains(err.Error(), "custom resources only") {
		t.Errorf("built-in kind: got %v, want overrides refused", err)
	}
}
