package fieldpath

import (
	"slices"
	"testing"
)

func TestEachFieldVisitsTheUnionInKeyOrder(t *testing.T) {
	a := map[string]any{"b": 1, "a": 2}
	b := map[string]any{"c": 3, "a": 4}
	var got []string
	var values [][2]any
	EachField(Fields("spec"), a, b, func(p Path, av, bv any) {
		got = append(got, p.String())
		values = append(values, [2]any{av, bv})
	})
	want := []string{"spec.a", "spec.b", "spec.c"}
	if !slices.Equal(got, want) {
		t.Fatalf("paths = %v, want %v", got, want)
	}
	wantValues := [][2]any{{2, 4}, {1, nil}, {nil, 3}}
	if !slices.Equal(values, wantValues) {
		t.Fatalf("values = %v, want %v", values, wantValues)
	}
}

func TestEachFieldOfNilMapsVisitsNothing(t *testing.T) {
	EachField(nil, nil, nil, func(p Path, _, _ any) { t.Fatalf("visited %s", p) })
}
