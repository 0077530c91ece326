package apply

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/cluster"
	"github.com/kapply/kapply/pkg/plan"
)

// maxConflictRetries bounds how often an object is read again and planned
// again after the server reports a concurrent write (409).
const maxConflictRetries = 5

// applyObject is Apply's step for one prepared object: Plan's item of it
// (planObject), executed at once by the one writer (sendItem) against the
// live object the run's LIST read — no GET and no check, the plan being
// of this instant — under Apply's conflict policy: plan again. A 409 from
// a concurrent writer (or, for a create, an object created meanwhile, or
// a client-side owner upgraded meanwhile) is answered by reading the
// object and making its plan again, at most maxConflictRetries times — unless
// the file sets metadata.resourceVersion: the patch carries it, as
// kubectl's does, so a stale file gets the server's conflict instead of
// overwriting newer state, and a new plan cannot help. A saved plan
// refuses instead (executeItem). With Options.Force, a patch the
// server refuses as invalid, or keeps refusing on conflicts, replaces
// the object (replace). A client dry run writes nothing: the plan's
// event is the answer.
func (r *runner) applyObject(ctx context.Context, o *object, live *unstructured.Unstructured) Event {
	for attempt := 0; ; attempt++ {
		it, ev, err := r.planObject(o, live)
		if err != nil {
			ev.Outcome, ev.Err, ev.Result = Failed, err, nil
			return ev
		}
		if r.opts.DryRun == cluster.ClientDryRun {
			return ev
		}
		if ev, err = r.sendItem(ctx, o, it, live, "", ev); err == nil {
			return ev
		}
		again := planAgainAfter(it, err)
		stale := again && it.Action == plan.Update && o.Obj.GetResourceVersion() != ""
		exhausted := attempt >= maxConflictRetries
		switch {
		case it.Action == plan.Update && r.forceReplaces(err) && (!again || stale || exhausted):
			ev := r.replace(ctx, r.resource(o), o, live, err)
			// The original's values, in live only, mask a denied restore's
			// error that quotes them.
			ev.Live = live
			return ev
		case stale:
			ev.Outcome, ev.Err, ev.Result = Failed, staleFileError(o, live, err), nil
			return ev
		case !again || exhausted:
			ev.Outcome, ev.Err, ev.Result = Failed, err, nil
			return ev
		}
		current, getErr := r.get(ctx, r.resource(o), o)
		if getErr != nil {
			return o.event(Event{Outcome: Failed, Err: fmt.Errorf("%w; reading the object again after it: %w", err, getErr)})
		}
		live = current
		if err := r.fileFromLive(o, live, true); err != nil {
			return o.event(Event{Outcome: Failed, Err: err})
		}
	}
}

// planAgainAfter tells the failures of an item's write that a plan made
// now answers: the object changed between the read and the write.
func planAgainAfter(it plan.Item, err error) bool {
	var upgrade *upgradeError
	switch it.Action {
	case plan.Create:
		return apierrors.IsAlreadyExists(err)
	case plan.Update:
		return apierrors.IsConflict(err)
	case plan.Apply:
		// The apply's own 409 names fields other managers own: a new plan
		// would not change them.
		return errors.As(err, &upgrade) && apierrors.IsConflict(err)
	}
	return false
}

// upgradeError is the failure of the patch that hands client-side apply's
// fields to the server-side manager before an apply.
type upgradeError struct{ err error }

func (e *upgradeError) Error() string {
	return fmt.Sprintf("upgrading client-side field ownership: %v", e.err)
}

func (e *upgradeError) Unwrap() error { return e.err }
