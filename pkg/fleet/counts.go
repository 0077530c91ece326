package fleet

import (
	"github.com/kapply/kapply/pkg/apply"
)

// Counts are a cluster's objects by outcome.
type Counts struct {
	Created, Configured, Unchanged, Pruned, Deleted, Failed int
	// FirstFailure is the error of the first failed object, if any.
	FirstFailure error
}

// Add counts events, as an Applier's Apply or Delete returns them.
func (c *Counts) Add(events []apply.Event) {
	for _, e := range events {
		switch e.Outcome {
		case apply.Created:
			c.Created++
		case apply.Configured:
			c.Configured++
		case apply.Unchanged:
			c.Unchanged++
		case apply.Pruned:
			c.Pruned++
		case apply.Deleted:
			c.Deleted++
		case apply.Failed:
			c.Failed++
			if c.FirstFailure == nil {
				c.FirstFailure = e.Err
			}
		}
	}
}

// Readiness is whether a cluster's objects became ready (apply --wait).
type Readiness int

const (
	// ReadyUnknown: readiness was not waited for.
	ReadyUnknown Readiness = iota
	Ready
	NotReady
)

func (r Readiness) String() string {
	switch r {
	case Ready:
		return "yes"
	case NotReady:
		return "no"
	}
	return "-"
}
