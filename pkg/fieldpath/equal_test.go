package fieldpath

import (
	"encoding/json"
	"math"
	"testing"
)

func TestEqual(t *testing.T) {
	big := int64(1<<53 + 1)
	for _, tc := range []struct {
		a, b any
		want bool
	}{
		{int64(1), float64(1), true},
		{int32(7), json.Number("7"), true},
		{big, big - 1, false}, // equal as float64
		{big, json.Number("9007199254740993"), true},
		{uint64(math.MaxUint64), uint64(math.MaxUint64), true},
		{uint64(math.MaxUint64), int64(-1), false},
		{math.NaN(), math.NaN(), false},
		{"1", int64(1), false},
		{true, true, true},
		{nil, nil, true},
		{nil, map[string]any{}, false},
		{map[string]any{"a": int64(1)}, map[string]any{"a": 1.0}, true},
		{map[string]any{"a": int64(1)}, map[string]any{"b": int64(1)}, false},
		{[]any{"x", int64(2)}, []any{"x", 2.0}, true},
		{[]any{"x"}, []any{"x", "y"}, false},
		{[]any{"x"}, map[string]any{}, false},
		{struct{ A []int }{}, struct{ A []int }{}, true}, // not JSON data: no panic
	} {
		if got := Equal(tc.a, tc.b); got != tc.want {
			t.Errorf("Equal(%#v, %#v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		if got := Equal(tc.b, tc.a); got != tc.want {
			t.Errorf("Equal(%#v, %#v) = %v, want %v (reversed)", tc.b, tc.a, got, tc.want)
		}
	}
}

func TestScalarKeyAgreesWithEqual(t *testing.T) {
	values := []any{int64(80), 80.0, json.Number("80"), uint8(80), "80", true, "true", 80.5, int64(1<<53 + 1), int64(1 << 53)}
	for _, a := range values {
		for _, b := range values {
			ka, _ := ScalarKey(a)
			kb, _ := ScalarKey(b)
			if (ka == kb) != Equal(a, b) {
				t.Errorf("%#v, %#v: keys %q %q, Equal %v", a, b, ka, kb, Equal(a, b))
			}
		}
	}
	for _, v := range []any{nil, map[string]any{}, []any{}, math.Inf(1)} {
		if _, ok := ScalarKey(v); ok {
			t.Errorf("ScalarKey(%#v) reports a key", v)
		}
	}
}

func TestEnginePathsPrintAndParseBack(t *testing.T) {
	p := Fields("spec", "template", "spec", "containers").
		Child(Key([]KeyValue{{"name", "web"}})).
		Child(Field("ports")).
		Child(Key([]KeyValue{{"containerPort", int64(8080)}, {"protocol", "TCP"}}))
	const want = "spec.template.spec.containers[name=web].ports[containerPort=8080,protocol=TCP]"
	if p.String() != want {
		t.Fatalf("printed %q, want %q", p, want)
	}
	parsed, err := Parse(want)
	if err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{
		map[string]any{"name": "web", "ports": []any{map[string]any{"containerPort": int64(8080), "protocol": "TCP"}}},
	}}}}}
	for _, q := range []Path{p, parsed} {
		got, err := q.Lookup(obj)
		if err != nil || ScalarText(got.(map[string]any)["containerPort"]) != "8080" {
			t.Errorf("%s: lookup %v, %v", q, got, err)
		}
	}
	if s := Fields("data").Child(Index(2)).Child(Value(int64(3))).String(); s != "data[2][=3]" {
		t.Errorf("index and value print as %q", s)
	}
	if s := Fields("metadata", "labels", "app.kubernetes.io/name").String(); s != `metadata.labels["app.kubernetes.io/name"]` {
		t.Errorf("a dotted label prints as %q", s)
	}
}
