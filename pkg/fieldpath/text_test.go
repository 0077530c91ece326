package fieldpath

import (
	"math"
	"reflect"
	"testing"
)

func TestTextForms(t *testing.T) {
	ports := Fields("spec", "ports")
	for _, tc := range []struct {
		path Path
		want string
	}{
		{ports.Child(Key([]KeyValue{{"port", int64(80)}, {"protocol", "TCP"}})), "spec.ports[port=80,protocol=TCP]"},
		{ports.Child(Key([]KeyValue{{"name", "80"}})), `spec.ports[name="80"]`},
		{ports.Child(Key([]KeyValue{{"a", 80.0}})), "spec.ports[a=80.0]"},
		{ports.Child(Key([]KeyValue{{"a", 0.25}, {"b", true}, {"c", nil}, {"d", "null"}})), `spec.ports[a=0.25,b=true,c=null,d="null"]`},
		{Fields("spec", "args").Child(Index(3)), "spec.args[3]"},
		{Fields("metadata", "finalizers").Child(Value("example.com/a")), "metadata.finalizers[=example.com/a]"},
		{Fields("metadata", "labels", "app.kubernetes.io/name"), `metadata.labels["app.kubernetes.io/name"]`},
		{Path{Field("a.b"), Key([]KeyValue{{"c=d", "e"}})}, `["a.b"]["c=d"=e]`},
		{Fields("x").Child(Value(map[string]any{"a": int64(1)})), `x[={"a":1}]`},
		{nil, ""},
	} {
		got := tc.path.Text()
		if got != tc.want {
			t.Errorf("%#v: text %q, want %q", tc.path, got, tc.want)
		}
		back, err := ParseText(got)
		if err != nil || !reflect.DeepEqual(back, tc.path) {
			t.Errorf("%q: parsed %#v, %v; want %#v", got, back, err, tc.path)
		}
	}
}

func TestParseTextErrors(t *testing.T) {
	for _, in := range []string{"a..b", "a.", "a[", "a[x]", "a[03]", "a[-1]", "a[=]", `a["b`, "a[x=1", "a b", `a[=[1,]]`, "a[]"} {
		if p, err := ParseText(in); err == nil {
			t.Errorf("%q: parsed as %#v, want an error", in, p)
		}
	}
}

// FuzzPathText: the text of any path parses back to the path — field
// names of any bytes (separators, quotes, unicode), key values of every
// JSON scalar type, set values and positions; and whatever ParseText
// accepts prints as text that parses to the same path. The seeds run in
// every go test.
func FuzzPathText(f *testing.F) {
	f.Add("spec", "web", int64(80), 0.25, true, uint16(3), []byte{0, 1, 2, 3, 4, 5, 6, 7})
	f.Add("a.b[c]=d\"e", "80", int64(-1), 80.0, false, uint16(0), []byte{1, 1, 2, 2, 3, 3})
	f.Add("ünï cødé\t", "true", int64(math.MinInt64), math.Inf(-1), true, uint16(65535), []byte{7, 6, 5, 4, 3, 2, 1, 0})
	f.Add("", "", int64(0), -0.0, false, uint16(1), []byte{2, 4, 6})
	f.Add("\xff\x00", "null", int64(math.MaxInt64), 1e21, true, uint16(9), []byte{5, 5, 5, 1})
	f.Add("x", "{a}", int64(7), math.NaN(), false, uint16(2), []byte{3, 4})
	f.Add("=", " lead", int64(1), 1e-300, true, uint16(4), []byte{1, 4, 5})
	f.Fuzz(func(t *testing.T, name, s string, i int64, fl float64, b bool, pos uint16, shape []byte) {
		path := fuzzPath(name, s, i, fl, b, int(pos), shape)
		text := path.Text()
		back, err := ParseText(text)
		if err != nil {
			t.Fatalf("%#v: its text %q does not parse: %v", path, text, err)
		}
		if !samePath(back, path) {
			t.Fatalf("%q parses to %#v, not %#v", text, back, path)
		}
		// Any text the parser takes is a fixed point.
		if p, err := ParseText(name); err == nil {
			if again, err := ParseText(p.Text()); err != nil || !samePath(again, p) {
				t.Fatalf("%q parses to %#v, whose text %q parses to %#v, %v", name, p, p.Text(), again, err)
			}
		}
	})
}

// fuzzPath builds a path step by step, each byte of shape choosing the
// next step and the type of its value.
func fuzzPath(name, s string, i int64, fl float64, b bool, pos int, shape []byte) Path {
	values := []any{s, i, fl, b, nil, name}
	var path Path
	for j, c := range shape {
		v := values[int(c>>3)%len(values)]
		switch c % 8 {
		case 0, 1:
			path = append(path, Field(name))
		case 2:
			path = append(path, Field(s))
		case 3:
			path = append(path, Key([]KeyValue{{Name: name, Value: v}}))
		case 4:
			path = append(path, Key([]KeyValue{{Name: s, Value: v}, {Name: name, Value: values[j%len(values)]}}))
		case 5:
			path = append(path, Value(v))
		case 6:
			path = append(path, Index(pos))
		case 7:
			// A map or list value is JSON: its strings came from JSON.
			path = append(path, Value([]any{i, map[string]any{"k": b, "s": "x]\",y"}}))
		}
	}
	return path
}

// samePath is reflect.DeepEqual, but NaN equals NaN: a NaN key value
// parses back as NaN.
func samePath(a, b Path) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if len(x.Keys) != len(y.Keys) {
			return false
		}
		for j := range x.Keys {
			if x.Keys[j].Name != y.Keys[j].Name || !sameValue(x.Keys[j].Value, y.Keys[j].Value) {
				return false
			}
		}
		if !sameValue(x.Value, y.Value) {
			return false
		}
		x.Keys, y.Keys, x.Value, y.Value = nil, nil, nil, nil
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}

func sameValue(a, b any) bool {
	if x, ok := a.(float64); ok && math.IsNaN(x) {
		y, ok := b.(float64)
		return ok && math.IsNaN(y)
	}
	return reflect.DeepEqual(a, b)
}
