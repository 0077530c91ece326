package load

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	yamlv2 "go.yaml.in/yaml/v2"
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
	{"JSON", `{"a": 1, "b": {"c": [1, {"d": 2, "d": 3}]}}`, ErrDuplicateKey, `duplicate field "b.c[1].d"`},
	{"JSON on lines", "{\n  \"a\": 1,\n  \"a\": 2\n}\n", ErrDuplicateKey, `duplicate field "a"`},
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
	// Merge keys: valid YAML whatever the merged maps set (the strict parse
	// refuses a key set by a merge and by the map); a key written twice in
	// one map is refused still, the merged ones not named.
	{"merge, then the key", "c: &c {tier: old, app: a}\nm:\n  <<: *c\n  tier: new\n", nil, ""},
	{"the key, then a merge", "c: &c {tier: old}\nm: {tier: new, <<: *c}\n", nil, ""},
	{"merge of two maps setting one key", "a: &a {x: 1}\nb: &b {x: 2}\nm:\n  <<: [*a, *b]\n  x: 3\n", nil, ""},
	{"two merge keys", "a: &a {x: 1}\nm: {<<: *a, <<: {x: 2}, x: 3}\n", nil, ""},
	{"merge of a merged map", "a: &a {x: 1}\nb: &b\n  <<: *a\n  x: 2\nm:\n  <<: *b\n  x: 3\n", nil, ""},
	{"merge and a key written twice", "c: &c {t: 1}\nm:\n  <<: *c\n  t: 2\nn:\n  u: 1\n  u: 2\n", ErrDuplicateKey, `line 7: key "u" already set in map: a key`},
	{"merge of a map with a key written twice", "a: &a {x: 1, x: 2}\nm:\n  <<: *a\n", ErrDuplicateKey, `line 1: key "x" already set in map`},
	{"merge and the key written twice", "x: &x {k: 1}\ny:\n  <<: *x\n  k: 2\n  k: 3\n", ErrDuplicateKey, `key "k" already set in map`},
	{"quoted << written twice", "m: {'<<': 1, \"<<\": 2}\n", ErrDuplicateKey, `key "<<" already set in map`},
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

// TestDuplicateKeyInJSONStream: a document of several JSON values is
// JSON, as for the hand-written reader; a key set twice in any of them is
// found (TestDuplicateKeysAsBefore holds no such document).
func TestDuplicateKeyInJSONStream(t *testing.T) {
	err, isJSON := jsonDuplicateKey([]byte(`{"a": 1} {"b": {"a": 2, "a": 3}} {"c": 1, "c": 2}`))
	if !isJSON || !errors.Is(err, ErrDuplicateKey) || !strings.Contains(err.Error(), `"b.a"`) {
		t.Errorf("%v %t, want b.a set twice, in JSON", err, isJSON)
	}
}

// TestKeysWrittenTwiceLeavesOutMerges pins the yaml.v2 behaviour
// keysWrittenTwice stands on: a map decoded into a MapSlice holds the keys
// it writes, not those its merge keys bring.
func TestKeysWrittenTwiceLeavesOutMerges(t *testing.T) {
	var m yamlv2.MapSlice
	if err := yamlv2.Unmarshal([]byte("a: &a {x: 1}\nm: {<<: [*a, {y: 2}], z: 3}\n"), &m); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(m); got != "[{a [{x 1}]} {m [{z 3}]}]" {
		t.Errorf("yaml.v2 decodes %s into a MapSlice, want the merged keys left out", got)
	}
	twice, ok := keysWrittenTwice([]byte("a: &a {x: 1}\nm: {x: 2, <<: *a, p: 1, p: 2}\n"))
	if !ok || len(twice) != 1 || !twice[`"p"`] {
		t.Errorf("keys written twice: %v %v, want p alone", twice, ok)
	}
	err := lossError([]byte("c: &c {t: 1}\nm:\n  <<: *c\n  t: 2\nn:\n  u: 1\n  u: 2\n"))
	if !errors.Is(err, ErrDuplicateKey) || strings.Contains(err.Error(), `key "t"`) {
		t.Errorf("%v, want u written twice, and not t (merged, then set)", err)
	}
}
