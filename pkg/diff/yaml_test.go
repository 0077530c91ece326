package diff

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// TestToYAMLAsSigsYAML checks that the direct encoding gives the bytes of
// sigs.k8s.io/yaml.Marshal (JSON, then YAML), which diffs always showed:
// on the demo manifests, on values chosen to trip a YAML encoder, and on
// generated objects.
func TestToYAMLAsSigsYAML(t *testing.T) {
	var objects []map[string]any
	err := filepath.WalkDir("../../testdata/demo", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, doc := range strings.Split(string(data), "\n---") {
			u := &unstructured.Unstructured{}
			js, err := utilyaml.ToJSON([]byte(doc))
			if err != nil || string(js) == "null" {
				continue
			}
			if err := u.UnmarshalJSON(js); err == nil {
				objects = append(objects, u.Object)
			}
		}
		return nil
	})
	if err != nil || len(objects) == 0 {
		t.Fatalf("reading the demo: %v (%d objects)", err, len(objects))
	}
	demo := len(objects)
	tricky := map[string]any{
		"strings": []any{"", "yes", "no", "on", "off", "true", "null", "~", "1", "0x1F", "1e3", "-", "- a", ": b",
			"a: b", "#c", "multi\nline\n", "trailing ", " leading", "tab\there", "quote'\"", "<html>&amp;",
			"\u2028\u2029", "ünïcödé 😀", "=", "!tag", "&anchor", "*alias", "%", "@", "`", "|", ">",
			strings.Repeat("long ", 40), "2006-01-02", "12:30:45", ".5", "+1", "0o17", "0b101", ".inf", ".nan"},
		"ints":   []any{int64(0), int64(-1), int64(1 << 62), int64(-1 << 63), uint64(1<<64 - 1), 7, int32(-5)},
		"nested": map[string]any{"empty": map[string]any{}, "list": []any{}, "null": nil, "bools": []any{true, false}},
		"keys":   map[string]any{"a10": 1, "a2": 2, "A": 3, "b": 4, "10": 5, "9": 6, "": 7, "yes": 8, "a b": 9, "x:y": 10},
		"lists":  []any{[]any{[]any{}}, map[string]any{"k": []any{map[string]any{}}}, nil},
		"floats": []any{1.0, 1e6, 0.5, 1e-7, 1e21},
		"number": json.Number("12"),
		"nilmap": map[string]any(nil), "nillist": []any(nil),
		"bad": "\xff\xfeinvalid",
	}
	objects = append(objects, tricky)
	for _, s := range []string{"\x00", "\x01", "\x1b[0m", "\x7f", "\u0085", "\u009f", "\ufeff", "\uffff", "\ufffd", "\xc3"} {
		objects = append(objects, map[string]any{"v": s}, map[string]any{s: "k"})
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		objects = append(objects, randomMap(rng, 4))
	}
	directs := 0
	for i, obj := range objects {
		if direct(obj) {
			directs++
		} else if i < demo {
			t.Errorf("demo object %d takes the JSON round trip, want the direct encoding", i)
		}
		want, wantErr := yaml.Marshal(obj)
		got, err := toYAML(obj)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("object %d: error %v, want %v", i, err, wantErr)
		}
		if got != string(want) {
			t.Errorf("object %d: direct encoding differs\n got:\n%s\nwant:\n%s", i, got, want)
		}
	}
	if directs < len(objects)/4 {
		t.Errorf("%d of %d objects encoded directly: the test checks too little", directs, len(objects))
	}
}

func randomMap(rng *rand.Rand, depth int) map[string]any {
	m := map[string]any{}
	for range rng.IntN(6) {
		m[randomString(rng)] = randomValue(rng, depth-1)
	}
	return m
}

func randomValue(rng *rand.Rand, depth int) any {
	kind := rng.IntN(9)
	if depth <= 0 {
		kind %= 5
	}
	switch kind {
	case 0:
		return randomString(rng)
	case 1:
		return rng.Int64N(1<<40) - 1<<39
	case 2:
		return rng.IntN(2) == 0
	case 3:
		return nil
	case 4:
		return float64(rng.IntN(2000)) / 8
	case 5, 6:
		return randomMap(rng, depth)
	default:
		list := []any{}
		for range rng.IntN(4) {
			list = append(list, randomValue(rng, depth-1))
		}
		return list
	}
}

func randomString(rng *rand.Rand) string {
	pieces := []string{"a", "Z", "1", "0", " ", ":", "-", "#", "\n", "'", "\"", "yes", "null", "ü", "😀", "\t", "{", "[", ",", "&", "*", "!", "|", ">", "%", "@", ".", "e", "+", "~"}
	var b strings.Builder
	for range rng.IntN(6) {
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	return fmt.Sprint(b.String())
}
