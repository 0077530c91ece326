package apply

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/merge"
	"github.com/kapply/kapply/pkg/schema"
)

// malformedRecordError refuses an object whose kubectl record is not a
// JSON object, as kubectl apply does (exit 1, "invalid JSON document"):
// the record is the only account of which fields the last apply set, and
// treating it as absent would keep, unannounced, every field the file
// dropped since. The other objects of the run are still applied.
func malformedRecordError(o *object, err error) error {
	return fmt.Errorf("%w; kubectl apply refuses the object too (invalid JSON document): correct the annotation or remove it "+
		"(kubectl annotate %s %s-); without it the next apply deletes nothing",
		err, o.Ref(), lastapplied.Annotation)
}

// maxPathsNamed bounds the fields a warning names.
const maxPathsNamed = 20

// shadowedCompactWarning warns when live carries kapply's compact record
// beside kubectl's, which this apply takes (see
// lastapplied.ShadowedCompact) and which leaves the compact one behind.
// It names the fields the compact record would have removed (in it, not in
// the file, still live) and kubectl's does not: they stay, and no later
// apply removes them. plan is the apply's plan, from kubectl's record.
// Paths only: a Secret's keys, never a value.
func shadowedCompactWarning(o *object, live *unstructured.Unstructured, file map[string]any, kind *schema.Kind, plan *merge.Result) string {
	compact, err := lastapplied.ShadowedCompact(live)
	if compact == nil && err == nil {
		return ""
	}
	head := fmt.Sprintf("%s: kapply drops its %s record: kubectl apply wrote %s after it, and that record is the one kapply reads",
		o.Ref(), lastapplied.CompactAnnotation, lastapplied.Annotation)
	if err != nil {
		return fmt.Sprintf("%s; the compact record cannot be read either (%v)", head, err)
	}
	withCompact, err := merge.ThreeWay(compact, file, live.Object, kind)
	if err != nil {
		return fmt.Sprintf("%s; what the compact record alone held cannot be told (%v)", head, err)
	}
	left := removedOnlyBy(withCompact, plan)
	if len(left) == 0 {
		return head + "; no field the file dropped is left behind"
	}
	named := left[:min(len(left), maxPathsNamed)]
	more := ""
	if len(left) > len(named) {
		more = fmt.Sprintf(" and %d more", len(left)-len(named))
	}
	return fmt.Sprintf("%s; these fields only the compact record held stay on the object, and are no longer removed when the file drops them: %s%s",
		head, strings.Join(named, ", "), more)
}

// removedOnlyBy lists the paths a removes because the file dropped them
// and b does not remove.
func removedOnlyBy(a, b *merge.Result) []string {
	removedByB := map[string]bool{}
	for _, c := range b.Changes {
		if c.Reason == merge.RemovedFromFile {
			removedByB[c.Path.String()] = true
		}
	}
	var out []string
	for _, c := range a.Changes {
		if path := c.Path.String(); c.Reason == merge.RemovedFromFile && !removedByB[path] {
			out = append(out, path)
		}
	}
	return out
}
