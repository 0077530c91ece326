package apply

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kapply/kapply/pkg/cluster"
	"github.com/kapply/kapply/pkg/delete"
	"github.com/kapply/kapply/pkg/secretmask"
	"github.com/kapply/kapply/pkg/wait"
)

// Delete deletes the objects the files declare: the last of the run's
// waves first (see reverseWaves), and in each, dependents first, then
// CRDs (their custom resources gone by then), then Namespaces. Events come
// in that order.
func (a *Applier) Delete(ctx context.Context, in Input, opts delete.Options) ([]Event, error) {
	objects, r, err := a.start(ctx, in, settings{WriteOptions: WriteOptions{Namespace: opts.Namespace, EnforceNamespace: opts.EnforceNamespace},
		Options: Options{Timeout: opts.Timeout, DryRun: opts.DryRun}, Cascade: opts.Cascade})
	if err != nil {
		return nil, err
	}
	loadErrs := in.Errors
	var events []Event
	for _, group := range r.deleteOrder(ctx, objects) {
		done := make([]Event, len(objects))
		forEachLimit(each(group), r.opts.Parallel, func(i int) {
			done[i] = r.deleteDeclared(ctx, objects[i], opts.IgnoreNotFound)
		})
		if opts.Wait && opts.DryRun == cluster.NoDryRun {
			// Dependents are gone before the CRDs and Namespaces they need.
			r.awaitGone(ctx, done, group)
		}
		for _, i := range group {
			events = append(events, done[i])
		}
	}
	for _, err := range loadErrs {
		events = append(events, Event{Outcome: Failed, Err: err})
	}
	return r.maskedAll(events), nil
}

// deleteOrder is the places of objects in the groups Delete deletes one
// after the other.
func (r *runner) deleteOrder(ctx context.Context, objects []*object) [][]int {
	var groups [][]int
	for _, wave := range r.reverseWaves(ctx, objects) {
		kinds := make([]k8sschema.GroupKind, len(wave))
		for n, i := range wave {
			kinds[n] = objects[i].Obj.GroupVersionKind().GroupKind()
		}
		for _, group := range delete.Order(kinds) {
			places := make([]int, len(group))
			for n, k := range group {
				places[n] = wave[k]
			}
			groups = append(groups, places)
		}
	}
	return groups
}

// deleteDeclared maps one object from the files and deletes it.
func (r *runner) deleteDeclared(ctx context.Context, o *object, ignoreNotFound bool) Event {
	if err := r.prepare(ctx, o); err != nil {
		return o.event(Event{Outcome: Failed, Err: errorOf(o, err)})
	}
	ev := r.deleteOne(ctx, o, Deleted)
	if apierrors.IsNotFound(ev.Err) && ignoreNotFound {
		return o.event(Event{Outcome: Skipped})
	}
	if ev.Err != nil {
		ev.Err = errorOf(o, ev.Err)
	}
	return ev
}

// deleteOne deletes a live or declared object (outcome Deleted or Pruned).
func (r *runner) deleteOne(ctx context.Context, o *object, outcome Outcome) Event {
	ev := o.event(Event{Outcome: outcome, Result: o.Obj})
	if r.opts.DryRun == cluster.ClientDryRun {
		return ev
	}
	// A pruned object (one with a UID) is deleted only if it is still the
	// one listed.
	opts := delete.Request{Cascade: r.opts.Cascade, UID: o.Obj.GetUID(), DryRun: r.opts.DryRun}.Options()
	client := r.resource(o)
	var uid types.UID
	err := r.retryTransient(ctx, func() (err error) {
		uid, err = r.sendDelete(ctx, client, o, opts)
		return err
	})
	if delete.GoneAlready(err, answerWasLost(err), outcome == Pruned) {
		err = nil
	}
	if err != nil {
		r.knowLiveSecret(ctx, client, o)
		return o.event(Event{Outcome: Failed, Err: fmt.Errorf("deleting: %w", err)})
	}
	if uid != "" && o.Obj.GetUID() == "" {
		// The result is the object deleted: the one a wait follows.
		ev.Result = o.Obj.DeepCopy()
		ev.Result.SetUID(uid)
	}
	return ev
}

// awaitGone waits, bounded by the run's timeout, until the objects the
// events at indexes deleted are gone (wait.Deleted, under the run's retry
// rule) and fails those that are not.
func (r *runner) awaitGone(ctx context.Context, events []Event, indexes []int) {
	var targets []wait.Target
	var places []int
	for _, i := range indexes {
		ev := events[i]
		if ev.Outcome != Deleted && ev.Outcome != Pruned || ev.Mapping == nil || ev.Result == nil {
			continue
		}
		ns := ""
		if ev.Mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			ns = ev.Object.GetNamespace()
		}
		targets = append(targets, wait.Target{Mapping: ev.Mapping, Namespace: ns, Name: ev.Object.GetName(), UID: ev.Result.GetUID()})
		places = append(places, i)
	}
	if len(targets) == 0 {
		return
	}
	results, err := wait.Deleted(ctx, r.dynamic, targets, wait.Options{Timeout: r.timeout(), Retry: r.retryTransient})
	for n, res := range results {
		if res.Deleted() {
			continue
		}
		i := places[n]
		cause := err
		if cause == nil {
			cause = fmt.Errorf("still there after %s (%s)", r.timeout(), delete.Describe(res))
		}
		ev := events[i]
		events[i] = Event{Object: ev.Object, Source: ev.Source, Mapping: ev.Mapping, Outcome: Failed,
			Err: ErrorOf(ev.Object, ev.Source, fmt.Errorf("waiting for the deletion to finish: %w", cause))}
	}
}

// knowLiveSecret adds the live copy of a Secret whose deletion failed to
// those the run masks: a Secret deleted by name holds no values, yet the
// server's refusal (a policy on DELETE sees oldObject) may quote the live
// ones.
func (r *runner) knowLiveSecret(ctx context.Context, client dynamic.ResourceInterface, o *object) {
	if !secretmask.IsSecret(o.Obj.Object) {
		return
	}
	if live, err := client.Get(ctx, o.Obj.GetName(), metav1.GetOptions{}); err == nil {
		r.know(live)
	}
}
