package apply

import (
	"context"

	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/ownership"
)

// Release is one object's `kapply release`: fields removed from its
// last-applied record, so the next apply leaves them to whoever writes
// them.
type Release struct {
	RecordResult
	// StillSet are the released fields the object given still sets, which
	// the next apply takes back.
	StillSet []fieldpath.Path
}

// Release removes opts.Fields from the last-applied record of each
// object's live object, and in the same write (guarded by its
// resourceVersion) from what client-side apply's managers own in its
// managedFields; every field must be in every record. Every patch
// is planned before any is sent: an object that cannot be planned is the
// error, and nothing is written. A write the server refuses is its
// result's Err; the others are still written.
func (a *Applier) Release(ctx context.Context, in Input, opts ReleaseOptions) ([]Release, error) {
	plan := func(r *runner, ctx context.Context, o *object) (Release, error) {
		live, err := r.getLive(ctx, o)
		if err != nil {
			return Release{}, err
		}
		// The fields leave client-side apply's managedFields in the same
		// write, or the next server-side apply's upgrade hands them over;
		// and server-side apply's, or its next apply deletes them.
		patch, err := ownership.Release(live, opts.Fields, clientSideManagers(live), serverSideManagers(opts.FieldManager))
		if err != nil {
			return Release{}, err
		}
		return Release{RecordResult: RecordResult{Live: live, patch: patch}, StillSet: ownership.StillSet(o.Obj, opts.Fields)}, nil
	}
	return planThenWrite(ctx, a, in, opts.Namespace, opts.RecordWrite, plan,
		func(r *Release) *RecordResult { return &r.RecordResult })
}

// serverSideManagers are the managers whose Apply entries a release takes
// its fields out of: kubectl's server-side apply (kapply's default), the
// legacy kapply, and the release's own field manager (that of an apply
// --server-side --field-manager X).
func serverSideManagers(fieldManager string) sets.Set[string] {
	managers := sets.New(ServerSideFieldManager, LegacyFieldManager)
	if fieldManager != "" {
		managers.Insert(fieldManager)
	}
	return managers
}
