package diff

import (
	"fmt"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"sigs.k8s.io/yaml"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/plan"
	"github.com/kapply/kapply/pkg/secretmask"
)

// ChangedSince renders, for an item of a saved plan refused because
// fields of live changed since the plan was made (plan.ChangedError's
// Fields), a unified diff of those fields: as the plan saw them (a
// change's Old; the last-applied record is kept only as a digest, so it
// is named, not shown), and now. Secret values are masked.
func ChangedSince(it plan.Item, fields []fieldpath.Path, live map[string]any) (string, error) {
	var planned, now strings.Builder
	for _, f := range fields {
		if isRecordAnnotation(f) {
			planned.WriteString(f.String() + ": (the record the plan read)\n")
			now.WriteString(f.String() + ": (another record)\n")
			continue
		}
		old := plannedValue(it, f)
		cur, err := f.Lookup(live)
		if err != nil {
			cur = nil
		}
		if secretmask.IsSecret(live) && len(f) > 0 && IsSecretValue(live, f[0].Field) {
			maskedOld, maskedNow := MaskChange(old, cur)
			old, cur = maskedOld, maskedNow
		}
		if err := writeFieldValue(&planned, f, old); err != nil {
			return "", err
		}
		if err := writeFieldValue(&now, f, cur); err != nil {
			return "", err
		}
	}
	return difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: textLines(planned.String()), B: textLines(now.String()),
		FromFile: it.ID.String() + " (when planned)", ToFile: it.ID.String() + " (now)", Context: 3})
}

// textLines splits text after each newline, each line keeping its own
// (difflib.SplitLines adds an empty last line to text that ends in one).
func textLines(text string) []string {
	out := strings.SplitAfter(text, "\n")
	if out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// plannedValue is the value the plan saw at path: in the Old of the
// change at path or at a parent of it, or the live value of a list or map
// the patch replaces whole.
func plannedValue(it plan.Item, path fieldpath.Path) any {
	for _, r := range it.Replaced {
		if r.Path.Equals(path) {
			return r.Live
		}
	}
	for _, c := range it.Changes {
		if !path.HasPrefix(c.Path) {
			continue
		}
		if len(c.Path) == len(path) {
			return c.Old
		}
		old, isMap := c.Old.(map[string]any)
		if v, err := path[len(c.Path):].Lookup(old); isMap && err == nil {
			return v
		}
	}
	// A field the plan keeps as live had it, in the object a saved plan
	// holds (a Secret's: data under the stringData it writes).
	if v, err := path.Lookup(it.Merged); it.Merged != nil && err == nil {
		return v
	}
	return nil
}

// writeFieldValue writes "path: value" (YAML, nested under the path for
// maps and lists; "(absent)" for nil).
func writeFieldValue(b *strings.Builder, path fieldpath.Path, v any) error {
	switch v.(type) {
	case nil:
		fmt.Fprintf(b, "%s: (absent)\n", path)
		return nil
	case map[string]any, []any:
		text, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		fmt.Fprintf(b, "%s:\n", path)
		for _, line := range textLines(string(text)) {
			b.WriteString("  " + line)
		}
		return nil
	}
	text, err := yaml.Marshal(v)
	if err != nil {
		return err
	}
	fmt.Fprintf(b, "%s: %s\n", path, strings.TrimSuffix(string(text), "\n"))
	return nil
}
