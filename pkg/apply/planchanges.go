package apply

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/ownership"
	"github.com/kapply/kapply/pkg/plan"
)

// serverSideChanges are the changes of a server-side apply item: every
// field its server dry run (result) would change on live, with the reason
// (set by the apply body, or removed: a field the manager stops applying)
// and the field's owners now. The server merged, so no three-way merge
// says why; the difference of the two objects is what the write does, and
// what plan.Item.Verify checks before executing it: another writer's move
// of a field the write does not change (status, a label) no longer
// refuses the item.
//
// Maps are compared field by field, lists whole (the server may merge a
// list by keys the plan does not know; comparing it whole refuses more,
// never less). Fields every write changes, and status, which an apply of
// the object does not write, are left out.
func serverSideChanges(body, live, result *unstructured.Unstructured) ([]plan.Change, error) {
	if live == nil || result == nil {
		return nil, nil
	}
	owners, err := ownership.Owners(live)
	if err != nil {
		return nil, err
	}
	differences := fieldpath.CompareObjects(live.Object, result.Object,
		fieldpath.CompareOptions{Depth: fieldpath.ByField, Skip: skippedByServerSideChanges})
	var changes []plan.Change
	for _, d := range differences {
		reason := plan.SetByFile
		if d.New == nil && !setIn(body.Object, d.Path) {
			reason = plan.RemovedFromFile
		}
		changes = append(changes, plan.Change{Path: d.Path, Old: d.Old, New: d.New, Reason: reason, Owners: owners.Of(d.Path)})
	}
	return changes, nil
}

// skippedByServerSideChanges: status, and the metadata every write or the
// creation sets.
func skippedByServerSideChanges(p fieldpath.Path) bool {
	if p[0].Field == "status" {
		return true
	}
	return len(p) >= 2 && fieldpath.IsBookkeeping(p[:2], fieldpath.EveryWrite|fieldpath.OnCreate)
}

// setIn reports whether obj holds a value at the map path p.
func setIn(obj map[string]any, p fieldpath.Path) bool {
	_, err := p.Lookup(obj)
	return err == nil
}
