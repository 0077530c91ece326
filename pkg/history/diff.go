package history

import (
	"fmt"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"sigs.k8s.io/yaml"

	"github.com/kapply/kapply/pkg/fieldpath"
)

// Diff renders what went from before's configurations to after's: a
// unified diff per member added, changed or removed, in member order.
// Secret values are not in either (Scrub). An empty result: no change.
func Diff(before, after []map[string]any, fromName, toName string) (string, error) {
	old, cur := indexByID(before), indexByID(after)
	var out strings.Builder
	for _, id := range fieldpath.UnionKeys(old, cur) {
		a, err := yamlOf(old[id])
		if err != nil {
			return "", fmt.Errorf("rendering %s: %w", id, err)
		}
		b, err := yamlOf(cur[id])
		if err != nil {
			return "", fmt.Errorf("rendering %s: %w", id, err)
		}
		text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{A: difflib.SplitLines(a), B: difflib.SplitLines(b),
			FromFile: fromName + " " + id, ToFile: toName + " " + id, Context: 3})
		if err != nil {
			return "", fmt.Errorf("comparing %s: %w", id, err)
		}
		out.WriteString(text)
	}
	return out.String(), nil
}

func yamlOf(obj map[string]any) (string, error) {
	if obj == nil {
		return "", nil
	}
	b, err := yaml.Marshal(obj)
	return string(b), err
}
