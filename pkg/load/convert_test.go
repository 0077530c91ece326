package load

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sigsyaml "sigs.k8s.io/yaml"
)

// TestJSONValueScalars: what a value becomes on its way through the
// builder (YAML 1.1 by yaml.v2, JSON, back to a map), written out, and
// checked against the builder's own decoders.
func TestJSONValueScalars(t *testing.T) {
	cases := []struct {
		yaml string
		want any // fallback reason when a string starting "!"
	}{
		{"1e3", int64(1000)}, {"1.0", int64(1)}, {"-0", int64(0)}, {"-0.0", int64(0)}, {"1.5", 1.5},
		{"1e21", 1e21}, {"1e20", 1e20}, {"1e18", int64(1e18)}, {"9223372036854775807", int64(math.MaxInt64)},
		{"9223372036854775808", 9223372036854775808.0}, {"18446744073709551615", 18446744073709551615.0},
		{"123456789012345678901234567890", 1.2345678901234568e29}, {"1e400", "1e400"},
		{"0o17", int64(15)}, {"017", int64(15)}, {"0x1F", int64(31)}, {"0b101", int64(5)}, {"1_000", int64(1000)},
		{"+12", int64(12)}, {".5", 0.5}, {"yes", true}, {"off", false}, {"y", true}, {"~", nil}, {"null", nil},
		{"", nil}, {"'1'", "1"}, {"2001-12-14", "2001-12-14"}, {"2001-12-14t21:59:43.10-05:00", "2001-12-14t21:59:43.10-05:00"},
		{"12:30:45", "12:30:45"}, {"!!binary aGVsbG8=", "hello"}, {"!!binary //4=", "\uFFFD\uFFFD"},
		{"!!float 3", int64(3)}, {`!!int "7"`, int64(7)}, {"!!str 1", "1"}, {"!custom x", "x"},
		{".inf", "!" + fallbackValue}, {".nan", "!" + fallbackValue}, {"!!float .inf", "!" + fallbackValue},
		{"{1: a, 1.5: b, true: c, .inf: d, 2001-12-14: e, 123456789.0: f}", map[string]any{
			"1": "a", "1.5": "b", "true": "c", ".inf": "d", "2001-12-14": "e", "1.2345679e+08": "f"}},
		{"{~: a}", "!" + fallbackKey}, {"{18446744073709551615: a}", "!" + fallbackKey},
		{"{1: a, '1': b}", "!" + fallbackCollide}, {"{yes: a, 'true': b}", "!" + fallbackCollide},
		{"{1.0: a, 1: b}", "!" + fallbackCollide},
	}
	for _, c := range cases {
		doc := []byte("apiVersion: v1\nkind: K\nmetadata: {name: x}\nv: " + c.yaml + "\n")
		obj, why := yamlObject(doc)
		if want, ok := c.want.(string); ok && len(want) > 0 && want[0] == '!' {
			if why != want[1:] {
				t.Errorf("%s: %q, want the fallback %q", c.yaml, why, want[1:])
			}
			continue
		}
		if why != "" {
			t.Errorf("%s: fallback %q", c.yaml, why)
			continue
		}
		got := obj.(*unstructured.Unstructured).Object["v"]
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %#v, want %#v", c.yaml, got, c.want)
		}
		// The builder's decoders: sigs.k8s.io/yaml to JSON, the
		// unstructured scheme from JSON.
		data, err := sigsyaml.YAMLToJSON(doc)
		if err != nil {
			t.Fatal(err)
		}
		builder, _, err := unstructured.UnstructuredJSONScheme.Decode(data, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if b := builder.(*unstructured.Unstructured).Object["v"]; !reflect.DeepEqual(got, b) {
			t.Errorf("%s: %#v, the builder %#v", c.yaml, got, b)
		}
	}
}

// TestReadLocalCollidingKeys: keys that differ in YAML and are one string
// in JSON leave the builder either value, by map order; readLocal leaves
// such files to it.
func TestReadLocalCollidingKeys(t *testing.T) {
	files := map[string][]byte{}
	for i, m := range []string{"{1: a, '1': b}", "{yes: a, 'true': b}", "{on: a, 'true': b}", "{1.0: a, 1: b}",
		"{0x10: a, '16': b}", "{.5: a, '0.5': b}", "{.nan: a, .NaN: b}", "{!!binary /w==: a, !!binary /g==: b}"} {
		files[fmt.Sprintf("c%d.yaml", i)] = []byte("apiVersion: v1\nkind: K\nmetadata: {name: x}\ndata: " + m + "\n")
	}
	paths := writeFiles(t, t.TempDir(), files)
	for _, f := range readFiles(context.Background(), testGetter, fileInputs(paths), Files{}, nil, "") {
		if f.fallback != fallbackCollide {
			t.Errorf("%s: %q, want the fallback %q", f.source, f.fallback, fallbackCollide)
		}
	}
}
