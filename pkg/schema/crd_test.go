package schema

import (
	"errors"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/kapply/kapply/internal/fixture"
)

// widgetCRD has one list of each marking, plus unmarked and special fields.
var widgetCRD = fixture.WidgetCRD(fixture.WidgetGroup)

func loadCRD(t *testing.T, doc string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict([]byte(doc), &crd); err != nil {
		t.Fatalf("decoding CRD: %v", err)
	}
	return &crd
}

func widgetFromCRD(t *testing.T) *Kind {
	t.Helper()
	kind, err := FromCRD(loadCRD(t, widgetCRD), "v1")
	if err != nil {
		t.Fatalf("FromCRD: %v", err)
	}
	return kind
}

func TestFromCRDLists(t *testing.T) {
	kind := widgetFromCRD(t)
	if kind.Strategic {
		t.Error("FromCRD: want Strategic false")
	}
	for _, w := range []want{
		{path: "spec.byName", typ: List, list: Map, keys: []string{"name"}},
		{path: "spec.byPortProtocol", typ: List, list: Map, keys: []string{"port", "protocol"}},
		{path: "spec.tags", typ: List, list: Set},
		{path: "spec.steps", typ: List, list: Atomic},
		{path: "spec.rules", typ: List, list: Atomic},
		{path: "spec.rules.ports", typ: List, list: Atomic},
		{path: "metadata.finalizers", typ: List, list: Set},
		{path: "metadata.ownerReferences", typ: List, list: Map, keys: []string{"uid"}},
		{path: "metadata.managedFields", typ: List, list: Atomic},
	} {
		checkWant(t, kind.Root, w)
	}
}

func TestFromCRDObjects(t *testing.T) {
	root := widgetFromCRD(t).Root
	cases := []struct {
		path string
		test func(*Node) bool
	}{
		{"apiVersion", func(n *Node) bool { return n.Type == Scalar }},
		{"kind", func(n *Node) bool { return n.Type == Scalar }},
		{"metadata.labels", func(n *Node) bool { return n.Type == Object && n.Item().TypeOf() == Scalar && !n.AtomicMap }},
		{"metadata.annotations", func(n *Node) bool { return n.Type == Object && n.Item().TypeOf() == Scalar }},
		{"metadata.name", func(n *Node) bool { return n.Type == Scalar }},
		{"spec.config", func(n *Node) bool { return n.Type == Object && n.PreserveUnknown && n.Field("x") == nil }},
		{"spec.template", func(n *Node) bool { return n.Embedded && n.PreserveUnknown && n.Field("kind").TypeOf() == Scalar }},
		{"spec.template.metadata.labels", func(n *Node) bool { return n.Type == Object }},
		{"spec.selector", func(n *Node) bool { return n.Type == Object && n.AtomicMap }},
		{"spec.port", func(n *Node) bool { return n.Type == Scalar && n.IntOrString }},
		{"spec.env", func(n *Node) bool { return n.Type == Object && n.Item().TypeOf() == Scalar }},
	}
	for _, c := range cases {
		if n := at(t, root, c.path); !c.test(n) {
			t.Errorf("%s: unexpected node %+v", c.path, *n)
		}
	}
}

// TestFromCRDWithoutSchema: a version served without a schema (which
// the API server refuses in apiextensions.k8s.io/v1, but a CRD read from a
// file may have).
func TestFromCRDWithoutSchema(t *testing.T) {
	crd := loadCRD(t, widgetCRD)
	crd.Spec.Versions = append(crd.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{Name: "v2", Served: true})
	kind, err := FromCRD(crd, "v2")
	if err != nil {
		t.Fatal(err)
	}
	if !kind.Root.PreserveUnknown || at(t, kind.Root, "metadata.finalizers").List != Set {
		t.Errorf("v2 without schema: want an object preserving unknown fields, with ObjectMeta; got %+v", *kind.Root)
	}
}

func TestFromCRDErrors(t *testing.T) {
	_, err := FromCRD(loadCRD(t, widgetCRD), "v3")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `no version "v3"`) {
		t.Errorf("missing version: got %v, want ErrNotFound naming v3", err)
	}
	crd := loadCRD(t, widgetCRD)
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = apiextensionsv1.JSONSchemaProps{Ref: ptr("#/definitions/x")}
	if _, err := FromCRD(crd, "v1"); err == nil || !strings.Contains(err.Error(), "not allowed") {
		t.Errorf("$ref in a CRD: got %v, want it refused", err)
	}
}

func ptr[T any](v T) *T { return &v }
