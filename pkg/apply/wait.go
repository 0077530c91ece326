package apply

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/kapply/kapply/pkg/cluster"
)

// Readiness is where one object stands at the end of a wait, in kstatus's
// terms (sigs.k8s.io/cli-utils/pkg/kstatus/status).
type Readiness struct {
	Target WaitTarget
	// Status is kstatus.CurrentStatus when the object became ready,
	// kstatus.FailedStatus when it failed, kstatus.NotFoundStatus with
	// Deleted when it was deleted; any other status (InProgress,
	// NotFound, Terminating, Unknown) means the wait ended first.
	Status kstatus.Status
	// Reason and Message explain a status other than Current: from the
	// object's own condition that says so (a Job's Failed, a Deployment's
	// Progressing, a Ready condition) when it has one, else kstatus's.
	Reason, Message string
	// TimedOut is set when the wait ended before the object was Current or
	// Failed.
	TimedOut bool
	// Object is the object as last seen; nil if it was never seen or is
	// deleted.
	Object *unstructured.Unstructured
}

// Ready reports whether the object became ready (kstatus Current).
func (r Readiness) Ready() bool { return r.Status == kstatus.CurrentStatus }

// Deleted reports whether the server no longer has the object.
func (r Readiness) Deleted() bool { return r.Reason == reasonDeleted }

const reasonDeleted = "Deleted"

// WaitOptions configure Wait.
type WaitOptions struct {
	// Timeout bounds the whole wait; zero means a minute.
	Timeout time.Duration
	// Gone waits for the objects to be deleted instead of ready: an object
	// is final once the server no longer has it (kstatus NotFound, reason
	// Deleted), whatever its status before.
	Gone bool
	// OnResult, when set, is given each target's readiness once it is
	// final: as soon as the object is Current or Failed, or when the wait
	// ends for those that are neither. It is never called concurrently.
	OnResult func(index int, r Readiness)
}

// Wait waits until every target is Current or Failed by kstatus or is
// deleted, or until the timeout, and returns their readiness in the
// targets' order. It opens one LIST and one WATCH per resource and
// namespace (filtered to the name when only one object of it is waited
// for), however many objects of it are waited for, and computes each
// object's status as its changes arrive. A Failed object is final: a
// rollout past its progress deadline or a failed Job does not heal by
// waiting; nor does a deleted one. The error is only for a context that
// ended before the timeout.
func Wait(ctx context.Context, client dynamic.Interface, targets []WaitTarget, opts WaitOptions) ([]Readiness, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = time.Minute
	}
	w := &waiter{client: client, opts: opts, results: make([]Readiness, len(targets)), final: make([]bool, len(targets)),
		targetUIDs: make([]types.UID, len(targets)), listSlots: make(chan struct{}, cluster.MaxListsInFlight)}
	groups := map[waitGroupKey]map[string][]int{}
	var order []waitGroupKey
	for i, t := range targets {
		w.results[i] = Readiness{Target: t, Status: kstatus.NotFoundStatus, Reason: "NotFound", Message: "not seen yet"}
		w.targetUIDs[i] = t.UID
		k := waitGroupKey{gvr: t.Mapping.Resource, namespace: t.Namespace}
		if groups[k] == nil {
			groups[k] = map[string][]int{}
			order = append(order, k)
		}
		groups[k][t.Name] = append(groups[k][t.Name], i)
	}
	waitCtx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	var wg sync.WaitGroup
	for _, k := range order {
		wg.Go(func() { w.watchGroup(waitCtx, k, groups[k]) })
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return w.results, fmt.Errorf("waiting for readiness: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := range w.results {
		if !w.final[i] {
			w.results[i].TimedOut = true
			w.finish(i)
		}
	}
	return w.results, nil
}

type waitGroupKey struct {
	gvr       schema.GroupVersionResource
	namespace string
}

type waiter struct {
	client dynamic.Interface
	opts   WaitOptions
	// listSlots bounds the LISTs open at once (the watches are not).
	listSlots chan struct{}
	// targetUIDs are the targets' UIDs, read by every watch: not changed
	// once the watches start.
	targetUIDs []types.UID

	mu      sync.Mutex
	results []Readiness
	final   []bool
}

// finish marks result i final and reports it; w.mu is held.
func (w *waiter) finish(i int) {
	w.final[i] = true
	if w.opts.OnResult != nil {
		w.opts.OnResult(i, w.results[i])
	}
}

// watchGroup follows the objects of one resource and namespace until each
// is final or ctx ends: a LIST, then a WATCH from its resourceVersion,
// again after the watch ends or its resourceVersion expires.
func (w *waiter) watchGroup(ctx context.Context, k waitGroupKey, names map[string][]int) {
	var client dynamic.ResourceInterface = w.client.Resource(k.gvr)
	if k.namespace != "" {
		client = w.client.Resource(k.gvr).Namespace(k.namespace)
	}
	var selector string
	if len(names) == 1 {
		for name := range names {
			selector = fields.OneTermEqualSelector("metadata.name", name).String()
		}
	}
	pending := len(names)
	observe := func(name string, obj *unstructured.Unstructured, deleted bool) {
		indexes, ok := names[name]
		if !ok {
			return
		}
		if w.observe(indexes, obj, deleted) {
			delete(names, name)
			pending--
		}
	}
	rv := ""
	for pending > 0 && ctx.Err() == nil {
		if rv == "" {
			listed := map[string]bool{}
			listRV, err := w.list(ctx, client, selector, func(item *unstructured.Unstructured) {
				listed[item.GetName()] = true
				observe(item.GetName(), item, false)
			})
			if err != nil {
				if w.giveUp(ctx, names, err) {
					return
				}
				continue
			}
			// The LIST reads the server's current state: a target it
			// lacks was deleted (before this LIST, or while a watch was
			// being re-opened).
			for name := range names {
				if !listed[name] {
					observe(name, nil, true)
				}
			}
			rv = listRV
			continue
		}
		rv = w.follow(ctx, client, selector, rv, observe, func() bool { return pending == 0 })
	}
}

// list reads the objects of one group in pages (cluster.EachItem), at most
// cluster.MaxListsInFlight of the wait's LISTs at once, and returns the
// resourceVersion to watch from.
func (w *waiter) list(ctx context.Context, client dynamic.ResourceInterface, selector string, fn func(*unstructured.Unstructured)) (string, error) {
	select {
	case w.listSlots <- struct{}{}:
		defer func() { <-w.listSlots }()
	case <-ctx.Done():
		return "", context.Cause(ctx)
	}
	return cluster.EachItem(ctx, cluster.DefaultChunkSize, metav1.ListOptions{FieldSelector: selector},
		func(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
			return client.List(ctx, opts)
		}, func(item *unstructured.Unstructured) error {
			fn(item)
			return nil
		})
}

// follow watches from rv and hands each change to observe until done, the
// watch ends or ctx does. It returns the resourceVersion to go on from, or
// "" to list again.
func (w *waiter) follow(ctx context.Context, client dynamic.ResourceInterface, selector, rv string,
	observe func(string, *unstructured.Unstructured, bool), done func() bool) string {
	// The server ends a watch after its timeout; ask for one as long as
	// the wait, so one watch serves it.
	seconds := int64(1)
	if deadline, ok := ctx.Deadline(); ok {
		seconds = max(int64(time.Until(deadline)/time.Second)+1, 1)
	}
	watcher, err := client.Watch(ctx, metav1.ListOptions{FieldSelector: selector, ResourceVersion: rv,
		AllowWatchBookmarks: true, TimeoutSeconds: &seconds})
	if err != nil {
		if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
			return ""
		}
		sleepCtx(ctx, time.Second)
		return rv
	}
	defer watcher.Stop()
	for {
		select {
		case <-ctx.Done():
			return rv
		case ev, ok := <-watcher.ResultChan():
			if !ok {
				return rv
			}
			if ev.Type == watch.Error {
				// Most often 410 Gone: the resourceVersion is too old.
				return ""
			}
			obj, isU := ev.Object.(*unstructured.Unstructured)
			if !isU {
				continue
			}
			rv = obj.GetResourceVersion()
			if ev.Type == watch.Bookmark {
				continue
			}
			observe(obj.GetName(), obj, ev.Type == watch.Deleted)
			if done() {
				return rv
			}
		}
	}
}

// giveUp handles a failed LIST: it reports whether the group is given up
// on (an error waiting will not cure, such as Forbidden: its objects are
// then final with status Unknown), else it pauses before the next try.
func (w *waiter) giveUp(ctx context.Context, names map[string][]int, err error) bool {
	var apiStatus apierrors.APIStatus
	if errors.As(err, &apiStatus) && !apierrors.IsTooManyRequests(err) && !apierrors.IsServiceUnavailable(err) &&
		!apierrors.IsServerTimeout(err) && !apierrors.IsTimeout(err) && !apierrors.IsInternalError(err) {
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, indexes := range names {
			for _, i := range indexes {
				w.results[i].Status, w.results[i].Reason, w.results[i].Message = kstatus.UnknownStatus, "ListFailed", err.Error()
				w.finish(i)
			}
		}
		return true
	}
	sleepCtx(ctx, time.Second)
	return false
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// observe records the object's new state for the targets at indexes and
// reports whether they are final.
func (w *waiter) observe(indexes []int, obj *unstructured.Unstructured, deleted bool) bool {
	if uid := w.targetUIDs[indexes[0]]; obj != nil && uid != "" && obj.GetUID() != uid {
		deleted = true // the object waited for is gone; this one took its name
	}
	r := Readiness{Object: obj}
	switch {
	case deleted:
		r.Status, r.Reason, r.Message, r.Object = kstatus.NotFoundStatus, reasonDeleted, "the object was deleted", nil
	default:
		r.Status, r.Reason, r.Message = ComputeStatus(obj)
	}
	// A deleted object is final either way: waiting for it to be ready
	// would only wait out the timeout (if it comes back, it is another
	// object, which this run did not apply).
	final := deleted || r.Status == kstatus.CurrentStatus || r.Status == kstatus.FailedStatus
	if w.opts.Gone {
		final = deleted
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, i := range indexes {
		if w.final[i] {
			continue
		}
		r.Target = w.results[i].Target
		w.results[i] = r
		if final {
			w.finish(i)
		}
	}
	return final
}

// ComputeStatus is kstatus's status of obj, with the reason and message of the
// object's own condition that explains it where there is one.
func ComputeStatus(obj *unstructured.Unstructured) (s kstatus.Status, reason, message string) {
	res, err := kstatus.Compute(obj)
	if err != nil {
		return kstatus.UnknownStatus, "StatusUnreadable", err.Error()
	}
	if res.Status == kstatus.CurrentStatus {
		return res.Status, "", res.Message
	}
	reason, message = "", res.Message
	if len(res.Conditions) > 0 {
		reason = res.Conditions[0].Reason
		if res.Conditions[0].Message != "" {
			message = res.Conditions[0].Message
		}
	}
	if c, ok := explainingCondition(obj, res.Status); ok {
		if c.Reason != "" {
			reason = c.Reason
		}
		if c.Message != "" {
			message = c.Message
		}
	}
	return res.Status, reason, message
}

// explainingCondition is the object's condition behind a status that is
// not Current: for Failed, a Stalled or Failed condition that is True, or a
// Progressing one past its deadline; for InProgress, a Ready condition that
// is not True.
func explainingCondition(obj *unstructured.Unstructured, s kstatus.Status) (kstatus.BasicCondition, bool) {
	objc, err := kstatus.GetObjectWithConditions(obj.Object)
	if err != nil {
		return kstatus.BasicCondition{}, false
	}
	for _, c := range objc.Status.Conditions {
		switch s {
		case kstatus.FailedStatus:
			if (c.Type == "Stalled" || c.Type == "Failed") && c.Status == "True" ||
				c.Type == "Progressing" && c.Reason == "ProgressDeadlineExceeded" {
				return c, true
			}
		case kstatus.InProgressStatus:
			if c.Type == "Ready" && c.Status != "True" {
				return c, true
			}
		}
	}
	return kstatus.BasicCondition{}, false
}
