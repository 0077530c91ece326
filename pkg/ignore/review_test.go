package ignore

import (
	"strings"
	"testing"
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

