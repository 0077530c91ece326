package apply

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/kapply/kapply/pkg/load"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// DeleteOptions configure `kapply delete`.
type DeleteOptions struct {
	Namespace        string
	EnforceNamespace bool
	// Cascade is how dependents go: background (default), foreground or orphan.
	Cascade metav1.DeletionPropagation
	// Wait makes each deletion wait, bounded by Timeout, until the object is gone.
	Wait           bool
	Timeout        time.Duration
	IgnoreNotFound bool
	DryRun         DryRun
	Parallel       int
}

// Delete deletes the objects the files declare: dependents first, then
// CRDs (their custom resources gone by then), then Namespaces. Events come
// in that order.
func (a *Applier) Delete(ctx context.Context, in Input, opts DeleteOptions) ([]Event, error) {
	r := a.runner(Options{Namespace: opts.Namespace, EnforceNamespace: opts.EnforceNamespace,
		Timeout: opts.Timeout, DryRun: opts.DryRun, Parallel: opts.Parallel, Cascade: opts.Cascade,
		WaitDeleted: opts.Wait, IgnoreNotFound: opts.IgnoreNotFound}.withDefaults())
	if err := r.reachServer(ctx); err != nil {
		return nil, err
	}
	objects, loadErrs := in.Objects, in.Errors
	var events []Event
	order := phases(objects)
	slices.Reverse(order)
	for _, phase := range order {
		done := make([]Event, len(objects))
		forEachLimit(phase.indexes, r.opts.Parallel, func(i int) {
			done[i] = r.deleteDeclared(ctx, objects[i])
		})
		for _, i := range phase.indexes {
			events = append(events, done[i])
		}
	}
	for _, err := range loadErrs {
		events = append(events, Event{Outcome: Failed, Err: err})
	}
	return events, nil
}

// deleteDeclared maps one object from the files and deletes it.
func (r *runner) deleteDeclared(ctx context.Context, o *load.Object) Event {
	if err := r.prepare(ctx, o); err != nil {
		return Event{Object: o, Outcome: Failed, Err: load.ErrorOf(o, err)}
	}
	ev := r.deleteOne(ctx, o, Deleted)
	if apierrors.IsNotFound(ev.Err) && r.opts.IgnoreNotFound {
		return Event{Object: o, Outcome: Skipped}
	}
	if ev.Err != nil {
		ev.Err = load.ErrorOf(o, ev.Err)
	}
	return ev
}

// deleteOne deletes a live or declared object (outcome Deleted or Pruned),
// and waits for it to be gone when asked.
func (r *runner) deleteOne(ctx context.Context, o *load.Object, outcome Outcome) Event {
	ev := Event{Object: o, Outcome: outcome, Result: o.Obj}
	if r.opts.DryRun == ClientDryRun {
		return ev
	}
	opts := metav1.DeleteOptions{DryRun: r.serverDryRun()}
	if r.opts.Cascade != "" {
		opts.PropagationPolicy = &r.opts.Cascade
	}
	if uid := o.Obj.GetUID(); uid != "" {
		// A pruned object is deleted only if it is still the one listed.
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	client := r.resource(o)
	err := r.retryTransient(ctx, func() error { return client.Delete(ctx, o.Obj.GetName(), opts) })
	if apierrors.IsNotFound(err) && answerWasLost(err) {
		err = nil // an earlier attempt deleted it; its answer was lost
	}
	if err != nil {
		return Event{Object: o, Outcome: Failed, Err: fmt.Errorf("deleting: %w", err)}
	}
	if r.opts.WaitDeleted && r.opts.DryRun == NoDryRun {
		if err := r.awaitGone(ctx, o); err != nil {
			return Event{Object: o, Outcome: Failed, Err: err}
		}
	}
	return ev
}

func (r *runner) awaitGone(ctx context.Context, o *load.Object) error {
	client := r.resource(o)
	poll := func(ctx context.Context) (bool, error) {
		_, err := client.Get(ctx, o.Obj.GetName(), metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, r.timeout(), true, poll); err != nil {
		return fmt.Errorf("waiting for the deletion to finish: %w", err)
	}
	return nil
}
