package schema

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// widgetDoc is a small v3 document in the shape kube-apiserver serves: refs
// wrapped in allOf, extensions on properties, a recursive type.
const widgetDoc = `{
  "openapi": "3.0.0",
  "components": {"schemas": {
    "test.v1.Widget": {
      "type": "object",
      "x-kubernetes-group-version-kind": [{"group": "test.io", "version": "v1", "kind": "Widget"}],
      "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"allOf": [{"$ref": "#/components/schemas/test.v1.Meta"}], "default": {}},
        "spec": {"allOf": [{"$ref": "#/components/schemas/test.v1.Spec"}]}
      }
    },
    "test.v1.Meta": {
      "type": "object",
      "properties": {
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "finalizers": {"type": "array", "items": {"type": "string"},
          "x-kubernetes-list-type": "set", "x-kubernetes-patch-strategy": "merge"}
      }
    },
    "test.v1.Port": {
      "type": "object", "x-kubernetes-map-type": "atomic",
      "properties": {"port": {"type": "integer"}, "protocol": {"type": "string"}}
    },
    "test.v1.Strategy": {"type": "object", "properties": {"type": {"type": "string"}}},
    "test.v1.Quantity": {"oneOf": [{"type": "string"}, {"type": "number"}]},
    "test.v1.IntOrString": {"format": "int-or-string", "oneOf": [{"type": "integer"}, {"type": "string"}]},
    "test.v1.Props": {
      "type": "object",
      "properties": {
        "items": {"allOf": [{"$ref": "#/components/schemas/test.v1.Props"}]},
        "properties": {"type": "object", "additionalProperties": {"$ref": "#/components/schemas/test.v1.Props"}},
        "anyOf": {"type": "array", "items": {"$ref": "#/components/schemas/test.v1.Props"}},
        "retained": {"allOf": [{"$ref": "#/components/schemas/test.v1.Props"}], "x-kubernetes-patch-strategy": "retainKeys"}
      }
    },
    "test.v1.Spec": {
      "type": "object",
      "properties": {
        "ports": {"type": "array", "items": {"$ref": "#/components/schemas/test.v1.Port"},
          "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port", "protocol"],
          "x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": "port"},
        "volumes": {"type": "array", "items": {"$ref": "#/components/schemas/test.v1.Strategy"},
          "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"],
          "x-kubernetes-patch-strategy": "merge,retainKeys", "x-kubernetes-patch-merge-key": "type"},
        "tolerations": {"type": "array", "items": {"$ref": "#/components/schemas/test.v1.Port"},
          "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port"]},
        "args": {"type": "array", "items": {"type": "string"}},
        "strategy": {"allOf": [{"$ref": "#/components/schemas/test.v1.Strategy"}], "x-kubernetes-patch-strategy": "retainKeys"},
        "plain": {"allOf": [{"$ref": "#/components/schemas/test.v1.Strategy"}]},
        "selector": {"allOf": [{"$ref": "#/components/schemas/test.v1.Strategy"}], "x-kubernetes-patch-strategy": "replace"},
        "replacedArgs": {"type": "array", "items": {"type": "string"}, "x-kubernetes-patch-strategy": "replace"},
        "target": {"allOf": [{"$ref": "#/components/schemas/test.v1.Port"}]},
        "limits": {"type": "object", "additionalProperties": {"$ref": "#/components/schemas/test.v1.Quantity"}},
        "maxSurge": {"allOf": [{"$ref": "#/components/schemas/test.v1.IntOrString"}]},
        "count": {"type": "integer", "format": "int32"},
        "raw": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
        "any": {"x-kubernetes-preserve-unknown-fields": true},
        "nothing": {"description": "no type at all"},
        "props": {"allOf": [{"$ref": "#/components/schemas/test.v1.Props"}]}
      }
    }
  }}
}`

var widgetGVK = schema.GroupVersionKind{Group: "test.io", Version: "v1", Kind: "Widget"}

func parseWidget(t *testing.T) *Document {
	t.Helper()
	doc, err := ParseOpenAPIV3([]byte(widgetDoc))
	if err != nil {
		t.Fatalf("parsing widget document: %v", err)
	}
	return doc
}

func widgetKind(t *testing.T, custom bool) *Kind {
	t.Helper()
	doc := parseWidget(t)
	kind, err := doc.Kind(widgetGVK)
	if custom {
		kind, err = doc.CustomKind(widgetGVK)
	}
	if err != nil {
		t.Fatalf("building Widget: %v", err)
	}
	return kind
}

// want is the strategy of one path, for table tests.
type want struct {
	path     string
	typ      Type
	list     ListType
	keys     []string
	identity []string
}

func checkWant(t *testing.T, root *Node, w want) {
	t.Helper()
	n := at(t, root, w.path)
	list, keys := n.ListStrategy()
	if n.Type != w.typ || list != w.list || !slices.Equal(keys, w.keys) || !slices.Equal(n.IdentityKeys, w.identity) {
		t.Errorf("%s: got %s %s keys %v identity %v; want %s %s keys %v identity %v",
			w.path, n.Type, list, keys, n.IdentityKeys, w.typ, w.list, w.keys, w.identity)
	}
}

func TestDocumentStrategicLists(t *testing.T) {
	root := widgetKind(t, false).Root
	for _, w := range []want{
		{path: "spec.ports", typ: List, list: Map, keys: []string{"port"}, identity: []string{"port", "protocol"}},
		{path: "spec.volumes", typ: List, list: Map, keys: []string{"type"}},
		{path: "spec.tolerations", typ: List, list: Atomic}, // list-type map, no patch strategy
		{path: "spec.args", typ: List, list: Atomic},
		{path: "spec.replacedArgs", typ: List, list: Atomic}, // patch strategy replace
		{path: "metadata.finalizers", typ: List, list: Set},
		{path: "spec.props.anyOf", typ: List, list: Atomic},
	} {
		checkWant(t, root, w)
	}
}

func TestDocumentCustomLists(t *testing.T) {
	root := widgetKind(t, true).Root
	for _, w := range []want{
		{path: "spec.ports", typ: List, list: Map, keys: []string{"port", "protocol"}},
		{path: "spec.tolerations", typ: List, list: Map, keys: []string{"port"}},
		{path: "spec.args", typ: List, list: Atomic},
		{path: "metadata.finalizers", typ: List, list: Set},
	} {
		checkWant(t, root, w)
	}
}

func TestDocumentStrategicObjects(t *testing.T) {
	kind := widgetKind(t, false)
	root := kind.Root
	if !kind.Strategic || !kind.Known() {
		t.Errorf("Kind: Strategic %v Known %v, want both true", kind.Strategic, kind.Known())
	}
	if !at(t, root, "spec.strategy").RetainKeys || at(t, root, "spec.plain").RetainKeys {
		t.Error("retainKeys: want on spec.strategy only, not on spec.plain (same component)")
	}
	if !at(t, root, "spec.volumes").Elem.RetainKeys {
		t.Error("spec.volumes: want items with RetainKeys (merge,retainKeys)")
	}
	if at(t, root, "spec.target").AtomicMap {
		t.Error("spec.target: strategic merge patch ignores x-kubernetes-map-type; want granular")
	}
	if !at(t, root, "spec.selector").AtomicMap || at(t, root, "spec.plain").AtomicMap {
		t.Error("patch strategy replace: want AtomicMap on spec.selector only, not on spec.plain (same component)")
	}
}

func TestDocumentCustomObjects(t *testing.T) {
	root := widgetKind(t, true).Root
	if !at(t, root, "spec.target").AtomicMap {
		t.Error("spec.target: want AtomicMap from x-kubernetes-map-type: atomic")
	}
	if at(t, root, "spec.strategy").RetainKeys {
		t.Error("spec.strategy: custom resources have no retainKeys")
	}
	if at(t, root, "spec.selector").AtomicMap {
		t.Error("spec.selector: custom resources have no patch strategy replace")
	}
}

func TestDocumentTypes(t *testing.T) {
	root := widgetKind(t, false).Root
	cases := []struct {
		path string
		typ  Type
		test func(*Node) bool
	}{
		{"metadata.labels", Object, func(n *Node) bool { return n.Item().TypeOf() == Scalar && n.Fields == nil }},
		{"spec.limits", Object, func(n *Node) bool { return n.Item().TypeOf() == Scalar }},
		{"spec.maxSurge", Scalar, func(n *Node) bool { return n.IntOrString }},
		{"spec.count", Scalar, func(n *Node) bool { return !n.IntOrString }},
		{"spec.raw", Object, func(n *Node) bool { return n.PreserveUnknown }},
		{"spec.any", Unknown, func(n *Node) bool { return n.PreserveUnknown }},
		{"spec.nothing", Unknown, func(n *Node) bool { return !n.PreserveUnknown }},
	}
	for _, c := range cases {
		n := at(t, root, c.path)
		if n.Type != c.typ || !c.test(n) {
			t.Errorf("%s: got %+v, want type %s", c.path, *n, c.typ)
		}
	}
}

func TestDocumentRecursiveSchemaIsACycle(t *testing.T) {
	done := make(chan *Node, 1)
	go func() { done <- widgetKind(t, false).Root }()
	select {
	case root := <-done:
		props := at(t, root, "spec.props")
		if at(t, root, "spec.props.items.items.properties") != props.Field("properties") {
			t.Error("props.items.items.properties: want the same node as props.properties (a cycle)")
		}
		if props.Field("properties").Item() != props {
			t.Error("props.properties values: want the Props node itself")
		}
		if r := at(t, root, "spec.props.retained"); !r.RetainKeys || r.Field("items") != props {
			t.Errorf("props.retained: want a RetainKeys copy of Props completed after the cycle, got %+v", *r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("building a recursive schema did not finish")
	}
}

func TestDocumentKindsShareComponents(t *testing.T) {
	doc := parseWidget(t)
	a, errA := doc.Kind(widgetGVK)
	b, errB := doc.Kind(widgetGVK)
	if err := errors.Join(errA, errB); err != nil {
		t.Fatal(err)
	}
	if a.Root != b.Root {
		t.Error("second Kind call: want the memoized graph")
	}
	c, err := doc.CustomKind(widgetGVK)
	if err != nil {
		t.Fatal(err)
	}
	if c.Root == a.Root || c.Strategic {
		t.Error("CustomKind: want its own graph, Strategic false")
	}
}

func TestDocumentKindNotFound(t *testing.T) {
	doc := parseWidget(t)
	other := schema.GroupVersionKind{Group: "test.io", Version: "v1", Kind: "Gadget"}
	_, err := doc.Kind(other)
	var nf *NotFoundError
	if !errors.Is(err, ErrNotFound) || !errors.As(err, &nf) || nf.GVK != other {
		t.Fatalf("Kind(Gadget): got %v, want a NotFoundError for it", err)
	}
	if doc.Has(other) || !doc.Has(widgetGVK) {
		t.Error("Has: want Widget only")
	}
}

func TestParseOpenAPIV3Errors(t *testing.T) {
	cases := []struct{ name, doc, want string }{
		{"not JSON", `{"components":`, "decoding OpenAPI v3 document"},
		{"bad type", `{"components":{"schemas":{"a":{"type":7}}}}`, "decoding type"},
		{"dangling ref", `{"components":{"schemas":{"a":{"properties":{"b":{"$ref":"#/components/schemas/missing"}}}}}}`,
			`component a: $ref "#/components/schemas/missing": no such component`},
		{"remote ref", `{"components":{"schemas":{"a":{"items":{"$ref":"other.json#/x"}}}}}`, "only local"},
	}
	for _, c := range cases {
		_, err := ParseOpenAPIV3([]byte(c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got error %v, want it to contain %q", c.name, err, c.want)
		}
	}
}

func TestParseOpenAPIV3TypeList(t *testing.T) {
	doc, err := ParseOpenAPIV3([]byte(`{"components":{"schemas":{"a":{
		"x-kubernetes-group-version-kind":[{"group":"","version":"v1","kind":"A"}],
		"type":["object","null"],"properties":{"n":{"type":["null","integer"]},"t":{"type":"array","items":[{"type":"string"}]}}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	kind, err := doc.Kind(schema.GroupVersionKind{Version: "v1", Kind: "A"})
	if err != nil {
		t.Fatal(err)
	}
	if at(t, kind.Root, "n").Type != Scalar || at(t, kind.Root, "t").Item() != nil {
		t.Error("type lists: want n scalar; tuple items unknown")
	}
}
