package plan

import (
	"encoding/json"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Check refuses a plan no run could have made: an unknown action, an item
// without identity or twice, or an action with state it cannot have (a
// patch without the resourceVersion it is made against, a create of an
// object that has a UID). Executing such an item would write without the
// precondition a saved plan promises. Encode and Decode check; so does
// Applier.Execute, for a plan built in code.
func Check(p *Plan) error {
	if p.Cluster.Server == "" {
		return fmt.Errorf("%w: the plan names no cluster (cluster.server is empty)", ErrInvalid)
	}
	if p.Settings.RollbackTo < 0 || p.Settings.RollbackTo > 0 && p.Settings.ApplySet == "" {
		return fmt.Errorf("%w: settings.rollbackTo %d needs a revision number and settings.applySet", ErrInvalid, p.Settings.RollbackTo)
	}
	seen := make(map[ID]int, len(p.Items))
	for i, it := range p.Items {
		// One object is served at every version of its kind: the run
		// refuses it twice whatever the versions (keyOfObject), and so
		// does a plan.
		object := it.ID
		object.Version = ""
		if first, dup := seen[object]; dup {
			return fmt.Errorf("%w: item %d (%s) is item %d again: an object is planned once", ErrInvalid, i+1, it.ID, first)
		}
		seen[object] = i + 1
		if err := checkItem(it); err != nil {
			return fmt.Errorf("%w: item %d (%s): %w", ErrInvalid, i+1, it.ID, err)
		}
	}
	return checkWaves(p)
}

func checkItem(it Item) error {
	if err := checkIdentity(it); err != nil {
		return err
	}
	if err := checkState(it); err != nil {
		return err
	}
	if err := checkPatch(it); err != nil {
		return err
	}
	if (it.Subresource != "" || it.ShareRecord) && it.Action != Apply {
		return fmt.Errorf("only an apply item goes to a subresource or shares a record, not a %s item", it.Action)
	}
	for _, obj := range []map[string]any{it.Merged, patchObject(it.Patch)} {
		if err := sameObject(it.ID, obj); err != nil {
			return err
		}
	}
	for j, c := range it.Changes {
		if !slices.Contains(reasons, c.Reason) {
			return fmt.Errorf("change %d has an unknown reason %q", j+1, c.Reason)
		}
	}
	return nil
}

func checkIdentity(it Item) error {
	switch {
	case !slices.Contains(actions, it.Action):
		return fmt.Errorf("unknown action %q", it.Action)
	case it.ID.Version == "" || it.ID.Kind == "" || it.ID.Name == "":
		return fmt.Errorf("the object's version, kind and name must be set")
	case it.Source.Index < 0 || it.Source.Line < 0:
		return fmt.Errorf("the source's index and line cannot be negative")
	}
	return nil
}

// sameObject refuses an object (the item's merged object or apply body)
// that is not the one the item's ID names: a reviewer reads the ID, the
// server would be sent the object (a create of another name, a Secret
// under a ConfigMap's ID, which redaction would not recognise). An object
// without a namespace takes the request's, so only a different one counts.
func sameObject(id ID, obj map[string]any) error {
	if obj == nil {
		return nil
	}
	got := IDOf(&unstructured.Unstructured{Object: obj})
	if got.Namespace == "" {
		got.Namespace = id.Namespace
	}
	if got != id {
		return fmt.Errorf("its object is %s (%s), not the one the item names", got, got.Version)
	}
	return nil
}

// checkState: which live state each action needs.
func checkState(it Item) error {
	switch it.Action {
	case Create:
		if it.UID != "" || it.ResourceVersion != "" || it.LastApplied != "" {
			return fmt.Errorf("a create has no live object, yet the item has a UID, resourceVersion or record")
		}
		if it.Merged == nil {
			return fmt.Errorf("a create carries the object it creates (merged)")
		}
	case Apply:
		if it.UID != "" && it.ResourceVersion == "" {
			return fmt.Errorf("an apply to an existing object needs its resourceVersion")
		}
	default:
		if it.UID == "" || it.ResourceVersion == "" {
			return fmt.Errorf("a %s item needs the live object's UID and resourceVersion", it.Action)
		}
	}
	if (it.Action == Prune || it.Action == Delete) && (it.Merged != nil || it.MergedLabels != nil) {
		return fmt.Errorf("a %s item expects no object after it (merged and labels must be empty)", it.Action)
	}
	// A saved patch, unchanged or apply item holds its expected object's
	// labels instead of the object (onWire): both would be two answers to
	// Labels, which ApplySet membership reads.
	if it.Merged != nil && it.MergedLabels != nil {
		return fmt.Errorf("an item holds its merged object or its labels, not both")
	}
	return nil
}

// checkPatch: patch and apply items carry a body of their type; the others
// none.
func checkPatch(it Item) error {
	has := it.Patch.Type != "" || len(it.Patch.Data) > 0
	switch it.Action {
	case Update:
		if !slices.Contains([]PatchType{StrategicPatch, MergePatch, JSONPatch}, it.Patch.Type) {
			return fmt.Errorf("a patch item needs a patch of type strategic, merge or json, not %q", it.Patch.Type)
		}
	case Apply:
		if it.Patch.Type != ApplyPatch {
			return fmt.Errorf("an apply item needs a patch of type apply, not %q", it.Patch.Type)
		}
	default:
		if has {
			return fmt.Errorf("a %s item sends no patch", it.Action)
		}
		return nil
	}
	if !json.Valid(it.Patch.Data) {
		return fmt.Errorf("the patch is not JSON")
	}
	return nil
}
