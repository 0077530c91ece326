package merge

import (
	"reflect"

	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// lenientMeta is the patch meta of a Go type that also describes what the
// Go type cannot: the values of a map of objects or lists, and content of
// unknown schema (a RawExtension), where apimachinery's PatchMetaFromStruct
// fails ("data type is not struct", "unable to find api field"). There it
// answers "no patch strategy": maps merge key by key, lists are atomic. It
// agrees with PatchMetaFromStruct wherever that succeeds, so the oracle built
// on it is kubectl's result where kubectl has one, and the engine's
// documented semantics where kubectl fails (TestIntendedOpaqueMapReplaced).
type lenientMeta struct {
	t reflect.Type // nil: unknown content
}

func (m lenientMeta) Name() string {
	if m.t == nil {
		return "unknown"
	}
	return m.t.Kind().String()
}

func (m lenientMeta) LookupPatchMetadataForStruct(key string) (strategicpatch.LookupPatchMeta, strategicpatch.PatchMeta, error) {
	t := deref(m.t)
	switch {
	case t != nil && t.Kind() == reflect.Struct:
		sub, pm, err := strategicpatch.PatchMetaFromStruct{T: t}.LookupPatchMetadataForStruct(key)
		if err == nil {
			return lenientMeta{sub.(strategicpatch.PatchMetaFromStruct).T}, pm, nil
		}
	case t != nil && t.Kind() == reflect.Map:
		return lenientMeta{t.Elem()}, strategicpatch.PatchMeta{}, nil
	}
	return lenientMeta{}, strategicpatch.PatchMeta{}, nil
}

func (m lenientMeta) LookupPatchMetadataForSlice(key string) (strategicpatch.LookupPatchMeta, strategicpatch.PatchMeta, error) {
	if t := deref(m.t); t != nil && t.Kind() == reflect.Struct {
		sub, pm, err := strategicpatch.PatchMetaFromStruct{T: t}.LookupPatchMetadataForSlice(key)
		if err == nil {
			return lenientMeta{sub.(strategicpatch.PatchMetaFromStruct).T}, pm, nil
		}
	}
	sub, pm, _ := m.LookupPatchMetadataForStruct(key)
	if t := deref(sub.(lenientMeta).t); t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
		return lenientMeta{t.Elem()}, pm, nil
	}
	return lenientMeta{}, pm, nil
}

func deref(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}
