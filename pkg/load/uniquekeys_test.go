package load

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"
)

// uniqueDocuments are block documents the line scanner follows.
var uniqueDocuments = []string{
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels:\n    app: a\ndata:\n  k: v\n  settings.json: '{\"a\": 1, \"a\": 2}'\n",
	"a:\n- name: x\n  image: y\n- name: z\n  image: w\nb: 1\n",
	"a:\n  - name: x\n    ports:\n    - name: p\n      port: 1\n    - name: q\n  - name: y\nname: top\n",
	"---\n# comment\na: |\n  name: 1\n  name: 2\n\n  a: 3\nb: >-\n  x\nc: \"quoted: # not a comment\" # comment\n",
	"a: [1, 2, x]\nb: 'it''s'\nc: \"esc \\\" quote\"\nd:\ne: -1\n",
	"args:\n- --flag\n- \"--other=x\"\n- 'x'\n",
}

// duplicateDocuments set a key twice, in ways the line scanner must not
// follow.
var duplicateDocuments = []string{
	"a: 1\na: 2\n",
	"a:\n  b: 1\n  c: 2\n  b: 3\n",
	"a:\n- name: x\n  name: y\n",
	"a:\n  - name: x\n    v: 1\n    name: y\n",
	"yes: 1\ntrue: 2\n",
	"1: a\n01: b\n",
	"a: 1\n\"a\": 2\n",
	"a: 1\n'a': 2\n",
	"m: {k: 1, k: 2}\n",
	"- {k: 1, k: 2}\n",
	"x: &x {k: 1}\ny:\n  <<: *x\n  k: 2\n  k: 3\n",
	"a: |\n  x\nb: 1\nb: 2\n",
	"a:\n  ? k\n  : 1\n  k: 2\n",
	"a: !!map {k: 1, k: 2}\n",
	"a: [{k: 1, k: 2}]\n",
	"l:\n- - k: 1\n    k: 2\n",
	"a:\n\tb: 1\n\tb: 2\n",
}

// TestPlainUniqueKeys: the filter follows the common shapes of manifests
// (and so spares them the strict parse) and never says "unique" of a
// document where the strict parse finds a key set twice.
func TestPlainUniqueKeys(t *testing.T) {
	for _, doc := range uniqueDocuments {
		if !plainUniqueKeys([]byte(doc)) {
			t.Errorf("not followed, want unique:\n%s", doc)
		}
		if _, err := sigsyaml.YAMLToJSONStrict([]byte(doc)); err != nil {
			t.Errorf("the case is not valid YAML: %v\n%s", err, doc)
		}
	}
	for _, doc := range duplicateDocuments {
		if plainUniqueKeys([]byte(doc)) {
			_, err := sigsyaml.YAMLToJSONStrict([]byte(doc))
			t.Errorf("unique, want not followed (strict parse: %v):\n%s", err, doc)
		}
	}
	// Every demo manifest: the filter agrees with the strict parse.
	files, _ := filepath.Glob("../../testdata/demo/*/*.yaml")
	more, _ := filepath.Glob("../../testdata/demo/*.yaml")
	for _, f := range append(files, more...) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(data), "\n---\n") {
			_, err := sigsyaml.YAMLToJSONStrict([]byte(doc))
			if plainUniqueKeys([]byte(doc)) && err != nil && strings.Contains(err.Error(), "already set") {
				t.Errorf("%s: unique, but the strict parse says %v", f, err)
			}
		}
	}
}

// TestPlainUniqueKeysGenerated: on generated block documents, made of few
// keys so that duplicates are common, the filter never says "unique" where
// the strict parse finds a key set twice, and follows many of the others.
func TestPlainUniqueKeysGenerated(t *testing.T) {
	followed, checked := 0, 0
	for _, doc := range blockDocuments(7, 200000) {
		if !plainUniqueKeys(doc) {
			continue
		}
		followed++
		_, err := sigsyaml.YAMLToJSONStrict(doc)
		if err == nil {
			checked++
		}
		if err != nil && strings.Contains(err.Error(), "already set in map") {
			t.Fatalf("unique, but the strict parse says %v:\n%s", err, doc)
		}
	}
	t.Logf("%d followed, %d of them valid", followed, checked)
	if checked < 1000 {
		t.Errorf("only %d valid documents followed (%d followed): the test checks too little", checked, followed)
	}
}

// blockDocuments generates n block documents of few keys, so that keys set
// twice are common: the generator TestPlainUniqueKeysGenerated checks the
// line scanner with, and TestReadLocalGenerated the fast path.
func blockDocuments(seed uint64, n int) [][]byte {
	keys := []string{"a", "b", "name", "yes", "on", "1", "\"a\"", "'b'", "a.b/c", "<<", "? a"}
	values := []string{"", "1", "x", "'q: r'", "\"s\\\" t\"", "[1, x]", "{a: 1}", "{a: 1, a: 2}", "|", "&x y", "*x", "- z", "v # c", "a: b"}
	next := func(n int) int {
		seed = seed*6364136223846793005 + 1442695040888963407
		return int(seed>>33) % n
	}
	docs := make([][]byte, n)
	for i := range docs {
		var b strings.Builder
		for range 1 + next(7) {
			b.WriteString(strings.Repeat(" ", 2*next(3)))
			if next(3) == 0 {
				b.WriteString("- ")
			}
			switch next(8) {
			case 0:
				b.WriteString(values[next(len(values))])
			case 1:
				b.WriteString("  block line: 1")
			default:
				b.WriteString(keys[next(len(keys))] + ":")
				if v := values[next(len(values))]; v != "" {
					b.WriteString(" " + v)
				}
			}
			b.WriteString("\n")
		}
		docs[i] = []byte(b.String())
	}
	return docs
}
