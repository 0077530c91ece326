package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/apply"
	kcluster "github.com/kapply/kapply/pkg/cluster"
	"github.com/kapply/kapply/pkg/diff"
	"github.com/kapply/kapply/pkg/plan"
)

// planView renders a plan's items as Applier.Plan hands them over
// (PlanOptions.OnItem), on the plan's workers: each item becomes the text
// of its diff at once, so that neither the plan (StreamOnly) nor the view
// holds each object three times over at 10,000 objects. Unless an external
// program is to show them, the comparisons keep only the rendered text.
type planView struct {
	printer diff.Printer
	render  bool
	// objects are the input's, whose names and Secret values the view
	// needs (the plan's items carry neither a Ref nor the file's values).
	objects []*unstructured.Unstructured
	mu      sync.Mutex
	byPlace map[int]comparedEvent
	// pruned are the prune items, in the plan's order.
	pruned []comparedEvent
	// noise applies the ignore rules and --explain's classes (nil: none).
	noise *diffNoise
}

func newPlanView(printer diff.Printer, render bool, objects []*unstructured.Unstructured) *planView {
	return &planView{printer: printer, render: render, objects: objects, byPlace: map[int]comparedEvent{}}
}

// add compares item it of the object at place i (-1: a prune item)
// against live; called concurrently.
func (v *planView) add(i int, it plan.Item, live *unstructured.Unstructured) {
	c := v.compare(i, it, live)
	v.mu.Lock()
	defer v.mu.Unlock()
	if i < 0 {
		v.pruned = append(v.pruned, c)
		return
	}
	v.byPlace[i] = c
}

func (v *planView) compare(i int, it plan.Item, live *unstructured.Unstructured) comparedEvent {
	obj, err := diff.FromItem(it, content(live))
	ev := v.eventOf(i, it, live, obj)
	masked := eventsWithFlagNames([]apply.Event{ev})[0]
	var stderr strings.Builder
	printWarnings(&stderr, masked)
	if err == nil {
		obj.Ref = apply.ObjectRef(ev.Object)
		if !v.printer.Options.Explain {
			obj.Owners = nil
		}
		v.noise.adjust(ev, &obj)
		var c diff.Comparison
		c, err = diff.Compare(obj, v.printer.Options)
		if err == nil && v.render {
			c, err = v.printer.Rendered(c)
		}
		if err == nil {
			return comparedEvent{stderr: stderr.String(), comparison: &c}
		}
	}
	// The comparison's failure is the command's own text, not the
	// library's: masked here, with the library's Secrets.
	ev.Outcome, ev.Err = apply.Failed, kcluster.MaskError(err, ev.Object, ev.Live, ev.Result)
	masked = eventsWithFlagNames([]apply.Event{ev})[0]
	return comparedEvent{stderr: stderr.String() + fmt.Sprintf("error: %v\n", masked.Err), failure: &ev}
}

// eventOf is the item as Apply's dry run would have reported it: the
// file's object (the live one of a prune), live, the result shown and the
// item itself; the ignore rules and Secret masks read it.
func (v *planView) eventOf(i int, it plan.Item, live *unstructured.Unstructured, obj diff.Object) apply.Event {
	ev := apply.Event{Object: live, Source: it.Source, Live: live, Outcome: apply.Configured, Warnings: it.Warnings}
	switch {
	case i >= 0:
		ev.Object = v.objects[i]
	case it.Action == plan.Prune || it.Action == plan.Delete:
		ev.Outcome = apply.Pruned
	}
	if obj.After != nil {
		ev.Result = &unstructured.Unstructured{Object: obj.After}
	}
	ev.Item = &it
	return ev
}

// collect writes to w, in input order, the warnings and errors of every
// object — then of the files that could not be loaded, of pruning and of
// what pruning left alone — and returns the comparisons (the objects', then
// the prune items'), the failed events, and how many there were in all.
func (v *planView) collect(w io.Writer, p *plan.Plan, planErr *apply.PlanError) (comparisons []diff.Comparison, failed []apply.Event, total int) {
	failures := map[int]apply.Event{}
	var others []apply.Event
	if planErr != nil {
		for _, err := range planErr.Errs {
			if f, ok := errors.AsType[*apply.PlanFailure](err); ok {
				failures[f.Index] = f.Event
			} else {
				others = append(others, apply.Event{Outcome: apply.Failed, Err: err})
			}
		}
	}
	var all []comparedEvent
	for i := range v.objects {
		c, planned := v.byPlace[i]
		if ev, ok := failures[i]; ok && !planned {
			c = compareEvent(eventsWithFlagNames([]apply.Event{ev})[0])
		}
		all = append(all, c)
	}
	for _, ev := range others {
		all = append(all, compareEvent(eventsWithFlagNames([]apply.Event{ev})[0]))
	}
	all = append(all, v.pruned...)
	if p != nil && len(p.Warnings) > 0 {
		skipped := apply.Event{Outcome: apply.Skipped, Warnings: p.Warnings}
		all = append(all, compareEvent(eventsWithFlagNames([]apply.Event{skipped})[0]))
	}
	for _, c := range all {
		io.WriteString(w, c.stderr)
		if c.failure != nil {
			failed = append(failed, *c.failure)
		}
		if c.comparison != nil {
			comparisons = append(comparisons, *c.comparison)
		}
	}
	return comparisons, failed, len(all)
}

// planOptionsOf are the plan options of the apply whose dry run diff
// shows: the server's dry run of each write unless computed locally;
// managedFields dropped from the live objects unless shown or explained.
func planOptionsOf(o apply.Options, keepManagedFields bool) apply.PlanOptions {
	return apply.PlanOptions{Write: o.Write, ServerDryRun: o.DryRun == kcluster.ServerDryRun, Prune: o.Prune,
		LocalServerSide: o.Write.ServerSide && o.DryRun == kcluster.ClientDryRun,
		NoManagedFields: !keepManagedFields, ChunkSize: o.ChunkSize}
}
