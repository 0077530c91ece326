package load

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/kapply/kapply/internal/offswitch"
)

// fastYAMLOn is false under KAPPLY_FASTYAML=off: every document is
// parsed by yaml.v2 (yamlMap).
var fastYAMLOn = !offswitch.Off("KAPPLY_FASTYAML")

// yamlObject is the object the builder makes of one YAML document: an
// *unstructured.Unstructured, an *unstructured.UnstructuredList (a map
// with an "items" key), or nil for an empty or null document, which the
// builder skips. It parses once, strictly: without an error the strict
// parse gives what the builder's parse gives, and it has found no key set
// twice (see lossError). why is the fallback reason when the builder
// fails on the document, or when readLocal does not follow it. Documents
// of the common block shape are parsed by fastYAML, to the same map.
func yamlObject(doc []byte) (obj runtime.Object, why string) {
	var m map[string]any
	ok := false
	if fastYAMLOn {
		m, ok = fastYAML(doc)
	}
	if !ok {
		if m, why = yamlMap(doc); why != "" {
			return nil, why
		}
	}
	return mapObject(m)
}

// mapObject is the object the builder makes of m, a document's map (nil:
// an empty or null document, which the builder skips).
func mapObject(m map[string]any) (runtime.Object, string) {
	if m == nil {
		return nil, ""
	}
	if !metadataDecodes(m) {
		return nil, fallbackObject
	}
	return objectOf(m)
}

// yamlMap is what jsonValue makes of the strict parse of doc: a map, or
// nil for an empty or null document.
func yamlMap(doc []byte) (map[string]any, string) {
	var v any
	if err := yaml.UnmarshalStrict(doc, &v); err != nil {
		return nil, fallbackYAML
	}
	if v == nil {
		return nil, ""
	}
	if _, ok := v.(map[any]any); !ok {
		return nil, fallbackObject // a scalar or a list: "cannot unmarshal ... into detector"
	}
	converted, why := jsonValue(v, 0)
	if why != "" {
		return nil, why
	}
	return converted.(map[string]any), ""
}

// jsonObject is the object the builder makes of one value of a JSON
// stream: it runs the builder's own decoders on the bytes.
func jsonObject(raw []byte) (runtime.Object, string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, ""
	}
	obj, _, err := unstructured.UnstructuredJSONScheme.Decode(raw, nil, nil)
	if err != nil || utiljson.Unmarshal(raw, &metadataOnlyObject{}) != nil {
		return nil, fallbackObject
	}
	return obj, ""
}

// objectOf makes of m what unstructured.UnstructuredJSONScheme decodes
// from m's JSON: a List when m has "items" (null or a list of maps and
// nulls), its items given the List's kind less "List" and its apiVersion
// when they have neither; and the object must have a kind.
func objectOf(m map[string]any) (runtime.Object, string) {
	items, isList := m["items"]
	if !isList {
		u := &unstructured.Unstructured{Object: m}
		if u.GroupVersionKind().Kind == "" {
			return nil, fallbackObject
		}
		return u, ""
	}
	var elements []any
	switch items := items.(type) {
	case nil:
	case []any:
		elements = items
	default:
		return nil, fallbackList
	}
	delete(m, "items")
	list := &unstructured.UnstructuredList{Object: m}
	apiVersion, itemKind := list.GetAPIVersion(), strings.TrimSuffix(list.GetKind(), "List")
	list.Items = make([]unstructured.Unstructured, 0, len(elements))
	for _, e := range elements {
		item, ok := e.(map[string]any)
		if !ok && e != nil {
			return nil, fallbackList
		}
		u := unstructured.Unstructured{Object: item}
		if u.GetKind() == "" && u.GetAPIVersion() == "" {
			u.SetKind(itemKind)
			u.SetAPIVersion(apiVersion)
		}
		list.Items = append(list.Items, u)
	}
	if list.GroupVersionKind().Kind == "" {
		return nil, fallbackObject
	}
	return list, ""
}

// metadataOnlyObject is what the builder's metadataValidatingDecoder
// decodes each document into: a document whose metadata does not decode
// as ObjectMeta is refused.
type metadataOnlyObject struct {
	metav1.TypeMeta   `json:""`
	metav1.ObjectMeta `json:"metadata,omitempty"`
}

// metadataDecodes tells whether the builder's JSON of m decodes into
// metadataOnlyObject. Only apiVersion, kind and metadata are decoded (the
// decoder matches keys by case, and ignores the others), so when m is not
// of the plain shape plainMetadata accepts, those three are marshalled
// and decoded alone; their values are the builder's, numbers as they
// decode.
func metadataDecodes(m map[string]any) bool {
	if plainMetadata(m) {
		return true
	}
	subset := map[string]any{}
	for _, key := range []string{"apiVersion", "kind", "metadata"} {
		if v, ok := m[key]; ok {
			subset[key] = v
		}
	}
	data, err := json.Marshal(subset)
	return err == nil && utiljson.Unmarshal(data, &metadataOnlyObject{}) == nil
}

// plainMetadata tells, cheaply, that m's apiVersion, kind and metadata
// decode: strings where ObjectMeta has strings, integers where it has
// integers, string maps and lists for labels, annotations and finalizers,
// null anywhere, and keys ObjectMeta does not have. Anything else (times,
// owner references, managed fields) is left to metadataDecodes.
func plainMetadata(m map[string]any) bool {
	if !stringOrNull(m["apiVersion"]) || !stringOrNull(m["kind"]) {
		return false
	}
	meta, ok := m["metadata"].(map[string]any)
	if !ok {
		return m["metadata"] == nil
	}
	for key, v := range meta {
		switch key {
		case "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion":
			ok = stringOrNull(v)
		case "generation", "deletionGracePeriodSeconds":
			_, ok = v.(int64)
			ok = ok || v == nil
		case "labels", "annotations":
			ok = stringMap(v)
		case "finalizers":
			ok = stringList(v)
		default:
			ok = !objectMetaKeys[key]
		}
		if !ok {
			return false
		}
	}
	return true
}

func stringOrNull(v any) bool {
	_, ok := v.(string)
	return ok || v == nil
}

func stringMap(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return v == nil
	}
	for _, e := range m {
		if _, ok := e.(string); !ok {
			return false
		}
	}
	return true
}

func stringList(v any) bool {
	s, ok := v.([]any)
	if !ok {
		return v == nil
	}
	for _, e := range s {
		if _, ok := e.(string); !ok {
			return false
		}
	}
	return true
}

// objectMetaKeys are the JSON names of ObjectMeta's fields: a key of
// metadata that is none of them is ignored by the decoder.
var objectMetaKeys = func() map[string]bool {
	keys := map[string]bool{}
	t := reflect.TypeFor[metav1.ObjectMeta]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		keys[name] = true
	}
	return keys
}()
