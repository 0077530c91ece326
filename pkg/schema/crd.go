package schema

import (
	"encoding/json"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// FromCRD returns the graph of the custom resources a CRD serves at version,
// from that version's structural schema (Strategic = false), so that a CRD
// applied in the same run gives its resources a schema before the server
// publishes one. apiVersion, kind and metadata are implicit in every CRD and
// added here; metadata is always ObjectMeta. A version without a schema gives
// an object that preserves unknown fields. The error wraps ErrNotFound when
// the CRD has no such version.
func FromCRD(crd *apiextensionsv1.CustomResourceDefinition, version string) (*Kind, error) {
	v, err := crdVersion(crd, version)
	if err != nil {
		return nil, err
	}
	raw, err := crdSchema(v)
	if err != nil {
		return nil, fmt.Errorf("reading schema of CRD %s version %s: %w", crd.Name, version, err)
	}
	root := newBuilder(nil, structuralDialect).root(raw)
	if root == nil || root.Type != Object {
		root = &Node{Type: Object, PreserveUnknown: true}
	}
	addObjectFields(root)
	return &Kind{Root: root}, nil
}

func crdVersion(crd *apiextensionsv1.CustomResourceDefinition, version string) (*apiextensionsv1.CustomResourceDefinitionVersion, error) {
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Name == version {
			return &crd.Spec.Versions[i], nil
		}
	}
	return nil, fmt.Errorf("CRD %s has no version %q: %w", crd.Name, version, ErrNotFound)
}

// crdSchema converts JSONSchemaProps to the raw form the builder reads by a
// JSON round trip: JSONSchemaProps serializes with the OpenAPI names, so one
// decoder serves documents and CRDs alike. Structural schemas have no $ref.
func crdSchema(v *apiextensionsv1.CustomResourceDefinitionVersion) (*rawSchema, error) {
	if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		return &rawSchema{Type: "object", PreserveUnknown: true}, nil
	}
	b, err := json.Marshal(v.Schema.OpenAPIV3Schema)
	if err != nil {
		return nil, fmt.Errorf("encoding openAPIV3Schema: %w", err)
	}
	var raw rawSchema
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("decoding openAPIV3Schema: %w", err)
	}
	if err := walkRefs(&raw, refNotAllowed); err != nil {
		return nil, err
	}
	return &raw, nil
}

func refNotAllowed(ref string) error {
	return fmt.Errorf("$ref %q: not allowed in a structural schema", ref)
}
