package diff

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/kapply/kapply/pkg/fieldpath"

	"github.com/kapply/kapply/pkg/merge"
	"github.com/kapply/kapply/pkg/secretmask"
	"github.com/kapply/kapply/pkg/shown"
)

// absent stands for a field one side lacks.
const absent = "(none)"

// maxValueWidth bounds a value printed in an explanation.
const maxValueWidth = 60

// explain renders the plan's changes of one object, a line each
// (`spec.replicas: 3 -> 2  (set by file; owned by kubectl-scale)`), in a
// block of comment lines after its diff.
func explain(c Comparison, opts Options) string {
	switch c.Outcome {
	case Created:
		return "# why: new object; every field set by file\n"
	case Deleted:
		return "# why: pruned: no file declares it\n"
	}
	var lines []string
	kept := 0
	for _, ch := range c.Object.Changes {
		switch {
		case ch.Reason == merge.KeptUnmanaged:
			kept++
		case opts.ShowManaged || !isNoisePath(ch.Path):
			lines = append(lines, explainChange(c, ch, opts))
		}
	}
	if kept > 0 {
		lines = append(lines, fmt.Sprintf("(%d live-only %s %s)", kept, plural(kept, "field"), merge.KeptUnmanaged))
	}
	if len(lines) == 0 {
		return "# why: the file changes nothing; the difference comes from the server\n"
	}
	return "# why:\n#   " + strings.Join(lines, "\n#   ") + "\n"
}

// explainWave is --explain's line of the wave the object is sent in,
// when the run has several.
func explainWave(obj Object) string {
	if obj.Wave == "" {
		return ""
	}
	return "# wave: " + shown.Text(obj.Wave) + "\n"
}

// explainChange is one line: path, old and new value, reason, owners.
func explainChange(c Comparison, ch merge.Change, opts Options) string {
	obj := c.Object
	old, new := formatValue(ch.Old), formatValue(ch.New)
	if !opts.ShowSecrets && c.secret && isSecretValue(ch.Path) {
		old, new = maskChange(ch.Old, ch.New)
	}
	why := ch.Reason.String()
	if obj.Owners != nil {
		if owners := obj.Owners.Of(ch.Path); len(owners) > 0 {
			why += "; owned by " + strings.Join(owners, ", ")
		}
	}
	return fmt.Sprintf("%s: %s -> %s  (%s)", ch.Path, old, new, why)
}

// isNoisePath reports a change to a field hidden without --show-managed.
func isNoisePath(p fieldpath.Path) bool {
	if len(p) < 2 || p[0].Field != "metadata" {
		return false
	}
	if slices.Contains(hiddenMetadata, p[1].Field) {
		return true
	}
	return len(p) >= 3 && p[1].Field == "annotations" && slices.Contains(hiddenAnnotations, p[2].Field)
}

// isSecretValue reports a path that holds a Secret's values: data,
// stringData, and the last-applied annotations, which copy them.
func isSecretValue(p fieldpath.Path) bool {
	return len(p) > 0 && slices.Contains(secretmask.Fields(), p[0].Field) || isRecordAnnotation(p)
}

// formatValue prints a value as compact JSON, cut at maxValueWidth.
func formatValue(v any) string {
	if v == nil {
		return absent
	}
	out, err := json.Marshal(v)
	s := string(out)
	if err != nil {
		s = fmt.Sprintf("%v", v)
	}
	if len(s) > maxValueWidth {
		s = s[:maxValueWidth-3] + "..."
	}
	return s
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
