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

// deepCopy copies maps and lists so the merged object shares nothing with
// the inputs; scalars are immutable.
func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
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
