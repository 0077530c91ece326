package ignore

import (
	"strings"
	"testing"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/plan"
)

// TestIgnoreFileSecondDocumentRefused: a rules file is one document; the
// rules of a second one were dropped without a word (not even "matched
// nothing"), so it is refused, naming the file and the line.
func TestIgnoreFileSecondDocumentRefused(t *testing.T) {
	doc := "apiVersion: kapply.dev/v1alpha1\nkind: IgnoreRules\nrules:\n- {kind: ConfigMap, jsonPointers: [/data/k]}\n"
	for name, data := range map[string]string{
		"two":        doc + "---\n" + doc,
		"a list too": doc + "---\n- {kind: Secret, jsonPointers: [/data/x]}\n",
	} {
		_, err := Parse("rules.yaml", []byte(data))
		if err == nil || !strings.Contains(err.Error(), "rules.yaml:6") {
			t.Errorf("%s: error %v, want one naming rules.yaml:6 (the second document)", name, err)
		}
	}
	for name, data := range map[string]string{
		"leading separator":  "---\n" + doc,
		"trailing separator": doc + "---\n",
		"trailing comment":   doc + "--- # end\n# nothing more\n",
		"a stray null":       doc + "---\nnull\n",
	} {
		if rules, err := Parse("rules.yaml", []byte(data)); err != nil || len(rules) != 1 {
			t.Errorf("%s: %d rules, error %v; want the one rule", name, len(rules), err)
		}
	}
}

// TestIgnoreFileAnchorsAndMerges: YAML's anchors, aliases and merge keys
// are YAML; a rule that is an alias, or merges another, is read (and the
// keys it merges are checked as a rule's own).
func TestIgnoreFileAnchorsAndMerges(t *testing.T) {
	head := "apiVersion: kapply.dev/v1alpha1\nkind: IgnoreRules\nrules:\n- &cm {kind: ConfigMap, jsonPointers: [/data/k]}\n"
	rules, err := Parse("rules.yaml", []byte(head+"- *cm\n- <<: *cm\n  name: web\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 3 || rules[1].Kind != "ConfigMap" || rules[2].Name != "web" || len(rules[2].JSONPointers) != 1 {
		t.Fatalf("rules %+v, want the anchored rule, its alias, and a merge of it named web", rules)
	}
	_, err = Parse("rules.yaml", []byte(head+"- <<: {kind: A, jsonPointer: [/a]}\n  name: web\n"))
	if err == nil || !strings.Contains(err.Error(), "jsonPointer") {
		t.Errorf("a merged misspelt key: error %v, want one naming jsonPointer", err)
	}
}

// TestIgnoreJQOfPathKeepsValuesIntact: a suggested jq expression selects
// its element by the key's value as it is; a value holding " | .." (an
// env var's name may) was rewritten by the cleanup of the expression's
// own pipes, and the rule, re-read from --suggest-ignore's output,
// silenced nothing.
func TestIgnoreJQOfPathKeepsValuesIntact(t *testing.T) {
	o := obj(t, `
spec:
  containers:
  - name: app
    env: [{name: "A | ..B", value: "1"}, {name: C, value: "2"}]
  finalizers: ["f | ..g", h]
`)
	env := fieldpath.Fields("spec", "containers").Child(fieldpath.Key([]fieldpath.KeyValue{{Name: "name", Value: "app"}})).
		Child(fieldpath.Field("env")).Child(fieldpath.Key([]fieldpath.KeyValue{{Name: "name", Value: "A | ..B"}}))
	for name, p := range map[string]fieldpath.Path{
		"env value": env.Child(fieldpath.Field("value")),
		"finalizer": fieldpath.Fields("spec", "finalizers").Child(fieldpath.Value("f | ..g")),
	} {
		r, err := ParseFlag("jq="+JQ(p), 1)
		if err != nil {
			t.Fatalf("%s: jq %q: %v", name, JQ(p), err)
		}
		if rs := (&Rules{list: []*Rule{r}}); !rs.Ignored(plan.ID{}, nil, o, p) {
			t.Errorf("%s: jq %q does not select %s", name, JQ(p), p)
		}
	}
}
