package apply

import (
	"context"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/load"
	"github.com/kapply/kapply/pkg/ownership"
)

// Release is the plan of `kapply release` for one object: the patch that
// removes the fields from its record.
type Release struct {
	RecordPatch
	// StillSet are the released fields the file still sets, which the next
	// apply takes back.
	StillSet []fieldpath.Path
}

// PlanRelease computes the patch that removes paths from the last-applied
// record of t's live object; every path must be in the record.
func PlanRelease(ctx context.Context, t *load.Object, paths []fieldpath.Path) (Release, error) {
	live, err := getLive(ctx, t)
	if err != nil {
		return Release{}, load.ErrorOf(t, err)
	}
	patch, err := ownership.Release(live, paths)
	if err != nil {
		return Release{}, load.ErrorOf(t, err)
	}
	return Release{RecordPatch: RecordPatch{Target: t, Live: live, Patch: patch}, StillSet: ownership.StillSet(t.Obj, paths)}, nil
}
