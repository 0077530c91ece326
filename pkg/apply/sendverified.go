package apply

import (
	"context"
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kapply/kapply/pkg/plan"
)

// sendVerified writes a saved plan's item as check verified it, under a
// saved plan's conflict policy: never plan again. The object may move
// between the check and the write in what the item does not depend on —
// a controller writes a CRD's conditions or a Deployment's status, another
// writer adds its label — and the write's resourceVersion precondition
// then fails. The object is read again and the same item verified against
// it (it, as the plan has it): if it still holds, the write is still the
// one reviewed and is sent again, at most maxConflictRetries times; if
// not, the item is refused naming what changed (refusal).
func (r *runner) sendVerified(ctx context.Context, it plan.Item, secrets map[plan.ID]*object, check *itemCheck) Event {
	o := check.o
	for attempt := 0; ; attempt++ {
		ev, err := r.sendItem(ctx, o, check.it, check.live, check.rv, o.event(Event{Live: check.live}))
		if err == nil {
			return r.unslimmed(ctx, o, check, ev)
		}
		if attempt >= maxConflictRetries || !movedUnderWrite(o, check.it, err) {
			ev.Outcome, ev.Err, ev.Result = Failed, r.refusal(ctx, r.resource(o), o, check.it, err), nil
			return r.unslimmed(ctx, o, check, ev)
		}
		live, err := r.readLive(ctx, o)
		if err != nil {
			return *readFailed(o, err)
		}
		next := &itemCheck{o: o, live: live, warnings: check.warnings}
		if next.rv, next.it, next.failed = r.verified(ctx, o, it, secrets, live); next.failed != nil {
			return *next.failed
		}
		check = next
	}
}

// movedUnderWrite tells a write's failure that only says the object's
// resourceVersion moved since the check: a 409 without the causes a
// server-side apply's conflict over other managers' fields carries. A
// create's object made meanwhile is not: the item was planned as absent;
// nor is a patch of a file that sets its resourceVersion: the patch
// carries it (as kubectl's), and the file is stale.
func movedUnderWrite(o *object, it plan.Item, err error) bool {
	removal := it.Action == plan.Prune || it.Action == plan.Delete
	if it.Action == plan.Create || !apierrors.IsConflict(err) || !removal && o.Obj.GetResourceVersion() != "" {
		return false
	}
	var status apierrors.APIStatus
	if it.Action == plan.Apply && errors.As(err, &status) && status.Status().Details != nil && len(status.Status().Details.Causes) > 0 {
		return false
	}
	return true
}
