package merge

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strconv"
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

// number returns a scalar as a float64 when it is numeric, so that 1 decoded
// as int64 and 1 decoded as float64 compare equal.
// integer returns v as an int64 when it is a Go integer that fits one.
func integer(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint:
		return int64(x), uint64(x) <= math.MaxInt64
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint64:
		return int64(x), x <= math.MaxInt64
	}
	return 0, false
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int8:
		return float64(x), true
	case int16:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint:
		return float64(x), true
	case uint8:
		return float64(x), true
	case uint16:
		return float64(x), true
	case uint32:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float32:
		return float64(x), true
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// scalarKey is a canonical, type-tagged string for a scalar, used to match
// list elements and set values; numbers of any Go type with the same value
// share a key.
func scalarKey(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return "s" + x, true
	case bool:
		return "b" + strconv.FormatBool(x), true
	}
	if i, ok := integer(v); ok {
		return "n" + strconv.FormatInt(i, 10), true
	}
	if f, ok := number(v); ok && shapeOf(v) == scalarShape {
		if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return "n" + strconv.FormatInt(int64(f), 10), true
		}
		return "n" + strconv.FormatFloat(f, 'g', -1, 64), true
	}
	return "", false
}

// equal is deep equality of decoded JSON values, numbers compared by value.
func equal(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		return ok && equalMaps(x, y)
	case []any:
		y, ok := b.([]any)
		return ok && equalLists(x, y)
	case nil:
		return b == nil
	}
	if ia, ok := integer(a); ok {
		if ib, okb := integer(b); okb {
			return ia == ib // exact: float64 loses integers past 2^53
		}
	}
	if fa, ok := number(a); ok {
		fb, okb := number(b)
		return okb && fa == fb
	}
	if shapeOf(a) == badShape || shapeOf(b) == badShape {
		return reflect.DeepEqual(a, b) // not JSON data: == could panic
	}
	return a == b
}

func equalMaps(x, y map[string]any) bool {
	if len(x) != len(y) {
		return false
	}
	for k, xv := range x {
		yv, ok := y[k]
		if !ok || !equal(xv, yv) {
			return false
		}
	}
	return true
}

func equalLists(x, y []any) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if !equal(x[i], y[i]) {
			return false
		}
	}
	return true
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
