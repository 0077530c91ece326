package apply

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/lastapplied"
)

// unheldKept names the first of a saved item's kept fields (KeptLive: the
// fields ignore rules kept at their live values when the plan was made)
// that neither the files' object nor the live object's last-applied record
// holds ("" when there is none). apply --plan takes no ignore rules, so it
// cannot make the kept fields again: the tamper check re-plans with the
// plan's. A kept field the file and record lack would put another writer's
// field into the record, and the next plain apply of the same files would
// delete it; a plan edited so is refused rather than trusted.
func unheldKept(kept []fieldpath.Path, file *object, live *unstructured.Unstructured) string {
	if len(kept) == 0 || live == nil {
		return ""
	}
	record, err := lastapplied.Read(live)
	if err != nil {
		record = nil // an unreadable record holds nothing
	}
	for _, p := range kept {
		if setIn(file.Obj.Object, p) || inStringData(file.Obj.Object, p) || (record != nil && (setIn(record, p) || inStringData(record, p))) {
			continue
		}
		return fmt.Sprintf("it keeps %s at its live value, but neither the files nor the object's last-applied record set it: the next apply would delete another writer's field", p)
	}
	return ""
}

// inStringData: p is a Secret's data.KEY and obj sets stringData.KEY,
// which the server folds into data.
func inStringData(obj map[string]any, p fieldpath.Path) bool {
	if len(p) != 2 || p[0].Field != "data" || !p[1].IsField() || obj["kind"] != "Secret" {
		return false
	}
	return setIn(obj, fieldpath.Fields("stringData", p[1].Field))
}
