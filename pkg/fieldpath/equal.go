package fieldpath

import (
	"encoding/json"
	"math"
	"reflect"
	"strconv"
)

// Equal is deep equality of decoded JSON values: maps by their entries,
// lists in order, integers exactly (float64 loses them past 2^53) and
// numbers of any Go type by value, so 1 decoded as int64 equals 1 decoded
// as float64.
func Equal(a, b any) bool {
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
			return ia == ib
		}
	}
	if fa, ok := number(a); ok {
		fb, okb := number(b)
		return okb && fa == fb
	}
	if !comparable(a) || !comparable(b) {
		return reflect.DeepEqual(a, b) // not JSON data: == could panic
	}
	return a == b
}

func comparable(v any) bool {
	switch v.(type) {
	case string, bool:
		return true
	}
	return false
}

func equalMaps(x, y map[string]any) bool {
	if len(x) != len(y) {
		return false
	}
	for k, xv := range x {
		yv, ok := y[k]
		if !ok || !Equal(xv, yv) {
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
		if !Equal(x[i], y[i]) {
			return false
		}
	}
	return true
}

// ScalarKey is a canonical, type-tagged string for a scalar, to match list
// elements and set values in maps: scalars that are Equal share a key. It
// reports false for maps, lists, nil and values JSON cannot carry (NaN).
func ScalarKey(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return "s" + x, true
	case bool:
		return "b" + strconv.FormatBool(x), true
	}
	if i, ok := integer(v); ok {
		return "n" + strconv.FormatInt(i, 10), true
	}
	if f, ok := number(v); ok && !math.IsNaN(f) && !math.IsInf(f, 0) {
		if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return "n" + strconv.FormatInt(int64(f), 10), true
		}
		return "n" + strconv.FormatFloat(f, 'g', -1, 64), true
	}
	return "", false
}

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
	case json.Number:
		i, err := x.Int64()
		return i, err == nil
	}
	return 0, false
}

// number returns a numeric scalar as a float64.
func number(v any) (float64, bool) {
	if i, ok := integer(v); ok {
		return float64(i), true
	}
	switch x := v.(type) {
	case uint:
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
