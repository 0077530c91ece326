package merge

import (
	"errors"
	"math"
	"testing"

	"github.com/kapply/kapply/pkg/fieldpath"
	k8sjson "k8s.io/apimachinery/pkg/util/json"
)

func TestBadInputErrors(t *testing.T) {
	pod := builtins(t)["Pod"].kind
	for _, tc := range []struct {
		name       string
		file, live map[string]any
		want       error
		side       Side
		path       string
	}{{
		name: "file element without merge key",
		file: decodeYAML(t, `spec: {containers: [{name: a}, {image: x}]}`),
		want: ErrMissingMergeKey, side: File, path: "spec.containers[1]",
	}, {
		name: "live element without merge key",
		file: decodeYAML(t, `spec: {containers: [{name: a}]}`),
		live: decodeYAML(t, `spec: {containers: [{image: x}]}`),
		want: ErrMissingMergeKey, side: Live, path: "spec.containers[0]",
	}, {
		name: "list where the schema says object",
		file: decodeYAML(t, `spec: {securityContext: [a]}`),
		want: ErrTypeMismatch, side: File, path: "spec.securityContext",
	}, {
		name: "object where the schema says list",
		file: decodeYAML(t, `spec: {containers: {name: a}}`),
		want: ErrTypeMismatch, side: File, path: "spec.containers",
	}, {
		name: "scalar element in a keyed list",
		file: decodeYAML(t, `spec: {containers: [web]}`),
		want: ErrTypeMismatch, side: File, path: "spec.containers[0]",
	}, {
		name: "object in a set list",
		file: decodeYAML(t, `metadata: {finalizers: [{a: b}]}`),
		want: ErrMalformed, side: File, path: "metadata.finalizers[0]",
	}, {
		name: "NaN",
		file: map[string]any{"spec": map[string]any{"priority": math.NaN()}},
		want: ErrMalformed, side: File, path: "spec.priority",
	}, {
		name: "not JSON data",
		file: map[string]any{"metadata": map[string]any{"labels": map[string]string{"a": "b"}}},
		want: ErrMalformed, side: File, path: "metadata.labels",
	}, {
		name: "directive key in the file",
		file: decodeYAML(t, `spec: {$patch: replace}`),
		want: ErrMalformed, side: File, path: "spec.$patch",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ThreeWay(nil, tc.file, tc.live, pod)
			var fe *FieldError
			switch {
			case !errors.Is(err, tc.want):
				t.Fatalf("error %v, want %v", err, tc.want)
			case !errors.As(err, &fe):
				t.Fatalf("error %v is not a *FieldError", err)
			case fe.Side != tc.side || fe.Path.String() != tc.path:
				t.Errorf("error at %s %s, want %s %s (%v)", fe.Side, fe.Path, tc.side, tc.path, err)
			}
		})
	}
}

// FuzzThreeWayJSON feeds arbitrary JSON as the three sides: the engine must
// never panic, and may only fail with a *FieldError.
func FuzzThreeWayJSON(f *testing.F) {
	f.Add([]byte(`{"spec":{"containers":[{"name":"a"}]}}`), []byte(`{"spec":{"containers":[{"name":"a","image":1}]}}`), []byte(`{}`))
	f.Add([]byte(`{"metadata":{"finalizers":["a",1,true]}}`), []byte(`{"metadata":{"finalizers":null}}`), []byte(`{"spec":[]}`))
	f.Fuzz(func(t *testing.T, l, fj, c []byte) {
		sides := [3]map[string]any{}
		for i, data := range [][]byte{l, fj, c} {
			if k8sjson.Unmarshal(data, &sides[i]) != nil {
				return
			}
		}
		for _, b := range builtins(t) {
			_, err := ThreeWay(sides[0], sides[1], sides[2], b.kind)
			var fe *FieldError
			if err != nil && !errors.As(err, &fe) {
				t.Fatalf("%s: untyped error %v", b.name, err)
			}
		}
		if _, err := ThreeWay(sides[0], sides[1], sides[2], crKind()); err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("custom: untyped error %v", err)
			}
		}
	})
}

// TestLargeIntegersCompareExactly: integers past 2^53 differ even where
// float64 would round them together, so a changed value is never "unchanged".
func TestLargeIntegersCompareExactly(t *testing.T) {
	live := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "spec": map[string]any{"n": int64(9007199254740992), "set": []any{int64(9007199254740992)}}}
	file := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "spec": map[string]any{"n": int64(9007199254740993)}}
	plan, err := ThreeWay(nil, file, live, nil)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Empty() || plan.Merged["spec"].(map[string]any)["n"] != int64(9007199254740993) {
		t.Errorf("empty %v, merged %v, patch %s", plan.Empty(), plan.Merged["spec"], plan.Patch.Data)
	}
	if k1, _ := fieldpath.ScalarKey(int64(9007199254740992)); k1 == mustKey(t, int64(9007199254740993)) {
		t.Errorf("set keys of 2^53 and 2^53+1 collide: %s", k1)
	}
	if mustKey(t, int64(3)) != mustKey(t, float64(3)) {
		t.Errorf("3 and 3.0 must share a set key")
	}
}

func mustKey(t *testing.T, v any) string {
	t.Helper()
	k, ok := fieldpath.ScalarKey(v)
	if !ok {
		t.Fatalf("no key for %v", v)
	}
	return k
}
