package schema_test

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	kschema "github.com/kapply/kapply/pkg/schema"
)

// A CRD that leaves spec.rules unmarked, made to merge rules by name with a
// user-declared merge key, through the Resolver an apply run uses.
func Example() {
	crd := &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Group: "example.com",
		Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Widget"},
		Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Schema: &apiextensionsv1.CustomResourceValidation{
			OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"rules": {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{
						Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"name": {Type: "string"}}}}},
				}},
			}},
		}}},
	}}
	key, err := kschema.ParseMergeKey("Widget.example.com:spec.rules=name")
	if err != nil {
		fmt.Println(err)
		return
	}
	r := kschema.NewResolver(kschema.ResolverConfig{Overrides: []kschema.Override{key}})
	r.AddCRD(crd)
	kind, err := r.Kind(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"})
	if err != nil {
		fmt.Println(err)
		return
	}
	list, keys := kind.Root.Field("spec").Field("rules").ListStrategy()
	fmt.Println("spec.rules:", list, keys)
	list, _ = kind.Root.Field("metadata").Field("finalizers").ListStrategy()
	fmt.Println("metadata.finalizers:", list)
	// Output:
	// spec.rules: map [name]
	// metadata.finalizers: set
}

func ExampleParseMergeKey() {
	o, err := kschema.ParseMergeKey("Widget.example.com/v1:spec.rules.ports=port,protocol")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(o.Kind, o.Group, o.Version, o.Path, o.List, o.Keys)
	// Output: Widget example.com v1 [spec rules ports] map [port protocol]
}
