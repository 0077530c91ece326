package ignore

import (
	"fmt"
	"slices"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/merge"
	"github.com/kapply/kapply/pkg/plan"
)

// Strip returns copies of the sides of the object id (live, after, ...)
// without the fields the rules ignore: each rule holding id is evaluated
// on each side (a pointer or jq expression may name different positions
// on each), and its managers' fields, read from the live object's
// managedFields (managed; nil: none), are removed from every side. A nil
// side stays nil; the sides given are not modified.
func (rs *Rules) Strip(id plan.ID, managed Managed, sides ...map[string]any) []map[string]any {
	out := make([]map[string]any, len(sides))
	rules := rs.For(id)
	for i, side := range sides {
		if side == nil || len(rules) == 0 {
			out[i] = side
			continue
		}
		c := merge.DeepCopy(side).(map[string]any)
		for _, r := range rules {
			r.hits.Add(int64(removeAll(c, r.pathsIn(c, managed))))
		}
		out[i] = c
	}
	return out
}

// Ignored reports whether the rules ignore the field at p of obj: obj
// holds it, and not once the rules are applied. status asks it of the
// fields it reports.
func (rs *Rules) Ignored(id plan.ID, managed Managed, obj map[string]any, p fieldpath.Path) bool {
	if obj == nil || !exists(p, obj) {
		return false
	}
	return !exists(p, rs.Strip(id, managed, obj)[0])
}

// FilterItem is the item without the changes the rules ignore: Merged and
// DryRunResult lose the ignored fields, Changes those whose field is
// ignored on live or on Merged; an Update left without changes is
// Unchanged. live is the object the item was planned against (nil for a
// create). kapply plan and diff filter items with it. The Patch is left
// as it was: filtering changes what a plan shows, and an executed item
// still writes its body; to leave the fields as live on execution, plan
// from the file Respect returns.
func (rs *Rules) FilterItem(it plan.Item, live map[string]any, managed Managed) plan.Item {
	if len(rs.For(it.ID)) == 0 {
		return it
	}
	sides := rs.Strip(it.ID, managed, live, it.Merged, it.DryRunResult)
	it.Merged, it.DryRunResult = sides[1], sides[2]
	it.Changes = FilterChanges(it.Changes, sides[0], sides[1])
	if len(it.Changes) == 0 && it.Action == plan.Update {
		it.Action = plan.Unchanged
	}
	return it
}

// FilterChanges drops the changes whose field is on neither side once the
// rules stripped them (Strip): the ignored ones.
func FilterChanges(changes []plan.Change, strippedLive, strippedAfter map[string]any) []plan.Change {
	var out []plan.Change
	for _, c := range changes {
		if Kept(c.Path, strippedLive, strippedAfter) {
			out = append(out, c)
		}
	}
	return out
}

// Respect returns a copy of file in which every field the rules ignore
// holds live's value, or is absent where live lacks it: apply
// --respect-ignore then leaves those fields as they are live (Argo CD's
// RespectIgnoreDifferences). The paths are those the rules name on live
// and on file; the fields changed are returned. The error is a jq
// expression that ran out of time: which fields to keep is unknown.
func (rs *Rules) Respect(id plan.ID, managed Managed, file, live map[string]any) (map[string]any, []fieldpath.Path, error) {
	out := merge.DeepCopy(file).(map[string]any)
	fileView := withStringDataFolded(file, stringDataOf(id, file))
	var set, drop []fieldpath.Path
	for _, r := range rs.For(id) {
		fromLive, err := r.pathsInTimed(live, managed)
		if err != nil {
			return nil, nil, err
		}
		r.hits.Add(int64(len(fromLive)))
		for _, p := range fromLive {
			if err := samePositions(p, live, out); err != nil {
				return nil, nil, fmt.Errorf("ignore rule %s: %w", r.Origin, err)
			}
			v, _ := p.Lookup(live)
			if setPath(out, p, merge.DeepCopy(v)) {
				set = append(set, p)
			}
		}
		fromFile, err := r.pathsInTimed(fileView, managed)
		if err != nil {
			return nil, nil, err
		}
		for _, p := range fromFile {
			if !exists(p, live) {
				drop = append(drop, p)
			}
		}
	}
	removeAll(out, drop)
	if stringDataOf(id, out) != nil {
		dropStringDataOf(out, append(slices.Clone(set), drop...))
	}
	keepServerFieldsOut(out, file)
	return out, append(set, drop...), nil
}

// keepServerFieldsOut gives out the file's own state of the metadata the
// server writes (resourceVersion, uid, managedFields, ...) and of the
// last-applied records: a rule naming the whole metadata or object copies
// them from live, and in the request they would lock on a stale version
// and fill the record, so that every apply writes again.
func keepServerFieldsOut(out, file map[string]any) {
	var paths []fieldpath.Path
	for _, f := range fieldpath.ServerMetadata(fieldpath.EveryWrite | fieldpath.OnCreate) {
		paths = append(paths, fieldpath.Fields("metadata", f))
	}
	for _, a := range fieldpath.RecordAnnotations {
		paths = append(paths, fieldpath.Fields("metadata", "annotations", a))
	}
	for _, p := range paths {
		if v, err := p.Lookup(file); err == nil {
			setPath(out, p, merge.DeepCopy(v))
		} else {
			_ = p.Remove(out) // absent from out too: nothing to remove
		}
	}
}

// Kept reports whether a change at p survives the rules: its field is on
// one of the stripped sides.
func Kept(p fieldpath.Path, strippedLive, strippedAfter map[string]any) bool {
	return strippedLive != nil && exists(p, strippedLive) || strippedAfter != nil && exists(p, strippedAfter)
}
