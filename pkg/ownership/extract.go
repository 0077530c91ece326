package ownership

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// RecordOf is the part of live that owned names, with live's apiVersion,
// kind, name and namespace, and without any last-applied annotation: the
// configuration a server-side manager applied, as client-side apply records
// it. SMD's typed ExtractItems does this with the kind's schema; a managed
// field set names list elements by their keys already, which is all the
// walk over live needs, so kapply does without the schema here.
func RecordOf(live *unstructured.Unstructured, owned *fieldpath.Set) *unstructured.Unstructured {
	owned = owned.Difference(recordAnnotations)
	obj, _ := extract(live.Object, owned).(map[string]any)
	if obj == nil {
		obj = map[string]any{}
	}
	out := &unstructured.Unstructured{Object: obj}
	out.SetAPIVersion(live.GetAPIVersion())
	out.SetKind(live.GetKind())
	out.SetName(live.GetName())
	if ns := live.GetNamespace(); ns != "" {
		out.SetNamespace(ns)
	}
	return out
}

// extract is the part of v that s names: a member whole, a child by its
// own fields. Lists keep live's order.
func extract(v any, s *fieldpath.Set) any {
	switch c := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, item := range c {
			pe := fieldpath.PathElement{FieldName: &k}
			if child, ok := s.Children.Get(pe); ok {
				out[k] = extract(item, child)
			} else if s.Members.Has(pe) {
				out[k] = runtime.DeepCopyJSONValue(item)
			}
		}
		return out
	case []any:
		out := []any{}
		for i, item := range c {
			if child, ok := listChild(s, item, i); ok {
				out = append(out, extract(item, child))
			} else if listMember(s, item, i) {
				out = append(out, runtime.DeepCopyJSONValue(item))
			}
		}
		return out
	}
	return runtime.DeepCopyJSONValue(v)
}

func listChild(s *fieldpath.Set, item any, index int) (*fieldpath.Set, bool) {
	var found *fieldpath.Set
	s.Children.Iterate(func(pe fieldpath.PathElement) {
		if found == nil && elementIs(pe, item, index) {
			found, _ = s.Children.Get(pe)
		}
	})
	return found, found != nil
}

func listMember(s *fieldpath.Set, item any, index int) bool {
	found := false
	s.Members.Iterate(func(pe fieldpath.PathElement) {
		found = found || elementIs(pe, item, index)
	})
	return found
}

// elementIs reports whether pe names item, the index-th of its list.
func elementIs(pe fieldpath.PathElement, item any, index int) bool {
	switch {
	case pe.Key != nil:
		m, ok := item.(map[string]any)
		if !ok {
			return false
		}
		for _, f := range *pe.Key {
			v, has := m[f.Name]
			if !has || !value.Equals(value.NewValueInterface(v), f.Value) {
				return false
			}
		}
		return true
	case pe.Value != nil:
		return value.Equals(value.NewValueInterface(item), *pe.Value)
	case pe.Index != nil:
		return *pe.Index == index
	}
	return false
}
