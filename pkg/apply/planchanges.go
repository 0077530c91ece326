package apply

import (
	"slices"

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
	var changes []plan.Change
	walkDifferences(nil, live.Object, result.Object, func(p fieldpath.Path, old, new any) {
		if skippedByServerSideChanges(p) {
			return
		}
		reason := plan.SetByFile
		if new == nil && !setIn(body.Object, p) {
			reason = plan.RemovedFromFile
		}
		changes = append(changes, plan.Change{Path: p, Old: old, New: new, Reason: reason, Owners: owners.Of(p)})
	})
	return changes, nil
}

// walkDifferences calls fn for each field of a and b whose values differ
// (fieldpath.Equal): nested maps field by field, in key order; anything
// else whole. A field one side lacks is nil there. Hand-written: SMD's
// typed comparison needs a typed schema, which a custom resource may lack,
// and its paths are not the plan's fieldpath.Path.
func walkDifferences(at fieldpath.Path, a, b map[string]any, fn func(p fieldpath.Path, old, new any)) {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		p := at.Child(fieldpath.Field(k))
		am, aMap := a[k].(map[string]any)
		bm, bMap := b[k].(map[string]any)
		switch {
		case aMap && bMap:
			walkDifferences(p, am, bm, fn)
		case !fieldpath.Equal(a[k], b[k]):
			fn(p, a[k], b[k])
		}
	}
}

// skippedByServerSideChanges: status, and the metadata every write sets.
func skippedByServerSideChanges(p fieldpath.Path) bool {
	if p[0].Field == "status" {
		return true
	}
	return len(p) >= 2 && p[0].Field == "metadata" &&
		slices.Contains([]string{"managedFields", "resourceVersion", "generation", "creationTimestamp", "uid"}, p[1].Field)
}

// setIn reports whether obj holds a value at the map path p.
func setIn(obj map[string]any, p fieldpath.Path) bool {
	_, err := p.Lookup(obj)
	return err == nil
}
