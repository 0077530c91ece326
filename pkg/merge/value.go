package merge

import (
	"encoding/json"
	"math"
	"slices"
)

// shape is the JSON kind of a decoded value.
type shape int

const (
	nullShape shape = iota
	mapShape
	listShape
	scalarShape
	badShape
)

func shapeOf(v any) shape {
	switch x := v.(type) {
	case nil:
		return nullShape
	case map[string]any:
		return mapShape
	case []any:
		return listShape
	case string, bool, json.Number,
		int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return scalarShape
	case float64:
		return finiteShape(x)
	case float32:
		return finiteShape(float64(x))
	}
	return badShape
}

// finiteShape rejects NaN and infinities, which JSON cannot carry.
func finiteShape(f float64) shape {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return badShape
	}
	return scalarShape
}

// DeepCopy copies the maps and lists of a decoded JSON value, so that the
// copy shares nothing with the original; scalars, immutable, are shared.
// Unlike runtime.DeepCopyJSONValue it takes any scalar type (an int built
// in code, not only JSON's int64) instead of panicking on one.
func DeepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = DeepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = DeepCopy(e)
		}
		return out
	}
	return v
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// asMap returns v as a map, or nil when it is something else.
func asMap(v any) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	return m
}

// asList returns v as a list and whether it was one.
func asList(v any) ([]any, bool) {
	l, ok := v.([]any)
	return l, ok
}

// listOrNil returns v as a list, or nil when it is something else.
func listOrNil(v any) []any {
	l, ok := v.([]any)
	if !ok {
		return nil
	}
	return l
}
