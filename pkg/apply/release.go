package apply

import (
	"context"

	"github.com/kapply/kapply/pkg/lastapplied"
)

// Release is the plan of `kapply release` for one object: the patch that
// removes the fields from its record.
type Release struct {
	RecordPatch
	// StillSet are the released fields the file still sets, which the next
	// apply takes back.
	StillSet []lastapplied.FieldPath
}

// PlanRelease computes the patch that removes paths from the last-applied
// record of t's live object; every path must be in the record.
func PlanRelease(ctx context.Context, t Target, paths []lastapplied.FieldPath) (Release, error) {
	live, err := getLive(ctx, t)
	if err != nil {
		return Release{}, targetError(t, err)
	}
	patch, err := lastapplied.Release(live, paths)
	if err != nil {
		return Release{}, targetError(t, err)
	}
	return Release{RecordPatch: RecordPatch{Target: t, Patch: patch}, StillSet: lastapplied.StillSet(t.Obj, paths)}, nil
}
