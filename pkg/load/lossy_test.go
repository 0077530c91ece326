package load

import (
	"errors"
	"strings"
	"testing"
)

// lossErrorCases are documents the builder would change without a word,
// and documents it would not.
var lossErrorCases = []struct {
	name, doc string
	want      error
	line      string
}{
	{"YAML", "a: 1\nb:\n  c: 2\n  c: 3\n", ErrDuplicateKey, "line 4"},
	{"YAML flow map", "metadata: {name: a, name: b}\n", ErrDuplicateKey, "line 1"},
	{"YAML keys in different maps", "a: {k: 1}\nb: {k: 1}\n", nil, ""},
	{"JSON", `{"a": 1, "b": {"c": [1, {"d": 2, "d": 3}]}}`, ErrDuplicateKey, "line 1"},
	{"JSON on lines", "{\n  \"a\": 1,\n  \"a\": 2\n}\n", ErrDuplicateKey, "line 3"},
	{"JSON keys in different objects", `{"a": {"k": 1}, "b": {"k": "k"}, "k": ["k", "k"]}`, nil, ""},
	{"JSON stream", `{"a": 1} {"a": 2}`, nil, ""},
	{"not UTF-8", "a: \"\xff\"\n", ErrNotUTF8, "line 1"},
	{"UTF-8", "a: \"é 日本\"\n", nil, ""},
	{"malformed (the load's error)", "a: {b\n", nil, ""},
	// Keys YAML tells apart and JSON does not: the builder keeps one value
	// or the other, by Go's map order.
	{"YAML keys colliding in JSON", "data:\n  1: a\n  \"1\": b\n", ErrDuplicateKey, `keys "1", 1 of one map all become "1"`},
	{"YAML booleans colliding", "labels: {yes: a, \"true\": b}\n", ErrDuplicateKey, `all become "true"`},
	{"YAML floats colliding as float32", "spec:\n  - {3.5e38: a, 1e39: b}\n", ErrDuplicateKey, `all become ".inf"`},
	{"YAML keys colliding deep in a list", "a:\n- b:\n  - {0x10: x, \"16\": y}\n", ErrDuplicateKey, `keys "16", 16 of one map all become "16"`},
	{"YAML number and string keys apart", "data: {1: a, \"2\": b, true: c, \"yes\": d}\n", nil, ""},
}

// TestLossError: the documents the builder would change without a word —
// a key set twice (YAML block or flow map, JSON, at any depth) or bytes
// that are not UTF-8 — and those it would not.
func TestLossError(t *testing.T) {
	for _, c := range lossErrorCases {
		err := lossError([]byte(c.doc))
		if !errors.Is(err, c.want) || (c.want == nil && err != nil) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
			continue
		}
		if err != nil && !strings.Contains(err.Error(), c.line) {
			t.Errorf("%s: %v, want it to say %s", c.name, err, c.line)
		}
	}
}
