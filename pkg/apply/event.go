package apply

import (
	"errors"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/plan"
)

// Outcome is what happened to one object.
type Outcome int

const (
	Failed Outcome = iota
	Created
	Configured
	Unchanged
	// Pruned: deleted because the files no longer declare it.
	Pruned
	// Deleted by `kapply delete`.
	Deleted
	// Skipped: left alone on purpose; the event's warnings say why.
	Skipped
)

var outcomeNames = map[Outcome]string{
	Failed: "failed", Created: "created", Configured: "configured", Unchanged: "unchanged",
	Pruned: "pruned", Deleted: "deleted", Skipped: "skipped",
}

func (o Outcome) String() string { return outcomeNames[o] }

// Event reports the outcome of one object, or a failure to load a file or
// of a step such as pruning (then Object is nil).
type Event struct {
	// Object is the input's object (its namespace settled as the run
	// applied it), or for pruning the live object deleted.
	Object *unstructured.Unstructured
	// Source is where Object came from: the input's Sources, zero for
	// objects built in code, File "(pruned)" for pruning's.
	Source plan.Source
	// Mapping is Object's API resource; nil when it could not be mapped.
	Mapping *meta.RESTMapping
	Outcome Outcome
	// Result is the object as the server returned it, or as the plan computed
	// it in a client dry run (nil on failure).
	Result *unstructured.Unstructured
	// Live is the object as it was read before the run changed it; nil when
	// it did not exist.
	Live *unstructured.Unstructured
	// Item is the object's item of the plan: its action, changes with
	// their reasons and owners, and merged object (after a server dry run,
	// its result and the changes read from it too). nil for a failure
	// before the object was planned and for what no plan item made (a
	// replace under --force). diff explains changes with it.
	Item *plan.Item
	// Err is set when Outcome is Failed. Its text has the values of the
	// Secrets the run knows masked (see mask.go); it unwraps to the
	// failure as it was, which a caller that prints it must mask itself.
	Err error
	// Warnings are messages about the object that did not stop it, Secret
	// values masked as in Err.
	Warnings []string
	// Wave is the wave of the run the object was sent in, and WaveReason
	// why (plan.Item.Wave); zero and empty in a run of one wave.
	Wave       int
	WaveReason string

	// masked says Err and Warnings are masked already: an event handed to
	// OnEvent is not masked again when the operation returns it.
	masked bool
}

// Lean is the event as Options.Lean keeps it: without its Item, Live and
// Result cut to what identifies the object — unless it failed or has
// warnings, whose Secret values the objects may be needed to mask.
func (e Event) Lean() Event {
	if e.Err != nil || len(e.Warnings) > 0 {
		return e
	}
	e.Item = nil
	sameObject := e.Live == e.Result
	e.Live, e.Result = identity(e.Live), identity(e.Result)
	if sameObject {
		// Unchanged: one object, one identity.
		e.Result = e.Live
	}
	return e
}

// identity is what names obj: its apiVersion, kind, name, namespace and
// uid; nil for nil.
func identity(obj *unstructured.Unstructured) *unstructured.Unstructured {
	if obj == nil {
		return nil
	}
	id := &unstructured.Unstructured{Object: map[string]any{}}
	id.SetAPIVersion(obj.GetAPIVersion())
	id.SetKind(obj.GetKind())
	id.SetName(obj.GetName())
	if ns := obj.GetNamespace(); ns != "" {
		id.SetNamespace(ns)
	}
	if uid := obj.GetUID(); uid != "" {
		id.SetUID(uid)
	}
	return id
}

// Summary counts the outcomes of a run's objects (and of its files that
// could not be loaded).
type Summary map[Outcome]int

// Summarize counts events by outcome. A failure of the prune step as a
// whole (PruneError) is no object's and is not counted: a run of two
// objects, one failed, is "1 failed" beside its "not pruning" error.
func Summarize(events []Event) Summary {
	s := Summary{}
	for _, e := range events {
		if _, step := errors.AsType[*PruneError](e.Err); step {
			continue
		}
		s[e.Outcome]++
	}
	return s
}

// AnyFailed reports whether an event of the run failed: an object, a file
// or a step such as pruning.
func AnyFailed(events []Event) bool {
	for _, ev := range events {
		if ev.Outcome == Failed {
			return true
		}
	}
	return false
}
