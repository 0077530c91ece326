package jsonmap

import (
	"errors"
	"fmt"
	"math"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// disagreement compares Object with apimachinery on data: nil when both
// refuse it, or both accept it and give the same value.
func disagreement(data []byte) error {
	want := map[string]any{}
	wantErr := utiljson.Unmarshal(data, &want)
	got, err := Object(data)
	var e *Error
	switch {
	case err != nil && !errors.As(err, &e):
		return fmt.Errorf("error %v is not an *Error", err)
	case err != nil && (e.Offset < 0 || e.Offset > len(data)):
		return fmt.Errorf("error %v: offset outside the input (%d bytes)", err, len(data))
	case wantErr != nil && err == nil:
		return fmt.Errorf("accepted %q, apimachinery refuses it: %v", data, wantErr)
	case wantErr == nil && err != nil:
		return fmt.Errorf("refused %q (%v), apimachinery accepts it", data, err)
	case wantErr == nil && !same(got, want):
		return fmt.Errorf("decoded %q as\n %#v\napimachinery gives\n %#v", data, got, want)
	}
	return nil
}

// same is reflect.DeepEqual that also tells -0.0 from 0.0.
func same(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || (a == nil) != (b == nil) || len(a) != len(b) {
			return false
		}
		for k, av := range a {
			if bv, ok := b[k]; !ok || !same(av, bv) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || (a == nil) != (b == nil) || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !same(a[i], b[i]) {
				return false
			}
		}
		return true
	case float64:
		b, ok := b.(float64)
		return ok && math.Float64bits(a) == math.Float64bits(b)
	default: // string, int64, bool or nil: comparable
		return a == b
	}
}
