package apply

import (
	"context"
	"fmt"

	"github.com/kapply/kapply/pkg/plan"
)

// objectOf is the object of the plan's item id, as the run writes it: a
// webhook gate's probe.
func (x *execution) objectOf(id plan.ID) *object {
	for i, it := range x.items {
		if it.ID != id {
			continue
		}
		if x.checks != nil && x.checks[i] != nil && x.checks[i].o != nil && !x.checks[i].deferred {
			return x.checks[i].o
		}
		var file *object
		if x.checks != nil && x.checks[i] != nil {
			file = x.checks[i].file
		}
		o, err := x.r.objectOfItem(x.ctx, it, file)
		if err != nil {
			return nil
		}
		return o
	}
	return nil
}

// notSent fails the items of groups, whose wave's gate did not pass.
func (x *execution) notSent(groups [][]int, err error) {
	for _, group := range groups {
		for _, i := range group {
			it := x.items[i]
			o := &object{Source: it.Source}
			if x.checks != nil && x.checks[i] != nil && x.checks[i].o != nil {
				o = x.checks[i].o
			}
			ev := Event{Outcome: Failed, Err: fmt.Errorf("%s: not applied: %w", it.ID, err)}
			if o.Obj != nil {
				ev = o.event(Event{Outcome: Failed, Err: errorOf(o, fmt.Errorf("not applied: %w", err))})
			}
			ev.Wave, ev.WaveReason = it.Wave, it.WaveReason
			x.events[i] = ev
			x.report(i)
		}
	}
}

// awaitRemoved waits for the objects of a group of removals to be gone
// before the next group (apply --plan --prune --wait): dependents first.
func (x *execution) awaitRemoved(ctx context.Context, group []int) {
	x.r.awaitGone(ctx, x.events, group)
}
