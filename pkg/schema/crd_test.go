package schema

import (
	"errors"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// widgetCRD has one list of each marking, plus unmarked and special fields.
const widgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          metadata:
            type: object
            properties:
              name: {type: string, maxLength: 20}
          spec:
            type: object
            properties:
              byName:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items: {type: object, properties: {name: {type: string}, value: {type: string}}}
              byPortProtocol:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [port, protocol]
                items: {type: object, properties: {port: {type: integer}, protocol: {type: string}}}
              tags:
                type: array
                x-kubernetes-list-type: set
                items: {type: string}
              steps:
                type: array
                x-kubernetes-list-type: atomic
                items: {type: string}
              rules:
                type: array
                items:
                  type: object
                  properties:
                    name: {type: string}
                    ports: {type: array, items: {type: object, properties: {port: {type: integer}}}}
              config:
                type: object
                x-kubernetes-preserve-unknown-fields: true
              template:
                type: object
                x-kubernetes-embedded-resource: true
                x-kubernetes-preserve-unknown-fields: true
              selector:
                type: object
                x-kubernetes-map-type: atomic
                properties: {app: {type: string}}
              port:
                x-kubernetes-int-or-string: true
                anyOf: [{type: integer}, {type: string}]
              env:
                type: object
                additionalProperties: {type: string}
  - name: v2
    served: true
    storage: false
`

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

func TestFromCRDWithoutSchema(t *testing.T) {
	kind, err := FromCRD(loadCRD(t, widgetCRD), "v2")
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
