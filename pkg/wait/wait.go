package wait

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/klog/v2"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/kapply/kapply/pkg/cluster"
	"github.com/kapply/kapply/pkg/shown"
)

// Target is one object to wait for: its API resource, namespace (empty
// for cluster-scoped objects), name and, when known, UID.
type Target struct {
	Mapping   *meta.RESTMapping
	Namespace string
	Name      string
	// UID is the object meant. An object of the same name with another
	// UID was created after it was deleted, and is not it. Empty: the
	// first object the wait sees under the name is the one meant.
	UID types.UID
}

// Ref names the target as kubectl's name printer does: kind.group/name.
func (t Target) Ref() string {
	gk := t.Mapping.GroupVersionKind.GroupKind()
	ref := strings.ToLower(gk.Kind)
	if gk.Group != "" {
		ref += "." + gk.Group
	}
	return shown.Text(ref) + "/" + shown.Text(t.Name)
}

// Result is where one object stands at the end of a wait, in kstatus's
// terms.
type Result struct {
	Target Target
	// Status is kstatus.CurrentStatus when the object became ready,
	// kstatus.FailedStatus when it failed, kstatus.NotFoundStatus with
	// Deleted when it was deleted; any other status (InProgress,
	// NotFound, Terminating, Unknown) means the wait ended first.
	Status kstatus.Status
	// Reason and Message explain a status other than Current: from the
	// object's own condition that says so (a Job's Failed, a Deployment's
	// Progressing, a Ready condition) when it has one, else kstatus's.
	Reason, Message string
	// TimedOut is set when the wait ended before the object was final.
	TimedOut bool
	// Object is the object as last seen; nil if it was never seen or is
	// deleted.
	Object *unstructured.Unstructured
}

// Ready reports whether the object became ready (kstatus Current).
func (r Result) Ready() bool { return r.Status == kstatus.CurrentStatus }

// Deleted reports whether the server no longer has the object.
func (r Result) Deleted() bool { return r.Reason == ReasonDeleted }

// Reasons of results the wait itself decides.
const (
	// ReasonDeleted: the server no longer has the object (or has another
	// object of its name, with another UID).
	ReasonDeleted = "Deleted"
	// ReasonListFailed: the objects could not be listed, and Options.Retry
	// gave up.
	ReasonListFailed = "ListFailed"
)

// Options configure a wait.
type Options struct {
	// Timeout bounds the whole wait; zero means a minute.
	Timeout time.Duration
	// OnResult, when set, is given each target's result once it is final:
	// as soon as it is, or when the wait ends for those that are not. It is
	// never called concurrently.
	OnResult func(index int, r Result)
	// Retry, when set, runs each LIST and retries it by the caller's rule
	// for transient errors; an error it returns is final for the objects
	// of that resource and namespace (status Unknown, ReasonListFailed).
	// Nil: a LIST that fails is tried again by the informer, with its
	// backoff, until the timeout. A failed or closed WATCH is always
	// opened again (after a LIST when its resourceVersion expired).
	Retry func(ctx context.Context, request func() error) error
	// Status, when set, decides an object's status before kstatus does
	// (the command passes health.Checker.Status, the user's CEL rules);
	// ok false leaves the object to kstatus. Nil: kstatus only. It is
	// called from several goroutines at once.
	Status func(obj *unstructured.Unstructured) (status kstatus.Status, reason, message string, ok bool)
}

// Ready waits until every target is Current or Failed by kstatus (or by
// Options.Status, for the objects it decides), or is
// deleted, or until the timeout, and returns their results in the
// targets' order. A Failed object is final: a rollout past its progress
// deadline or a failed Job does not heal by waiting; nor does a deleted
// one. The error is only for a context that ended before the timeout.
func Ready(ctx context.Context, client dynamic.Interface, targets []Target, opts Options) ([]Result, error) {
	// A deleted object is final too: waiting for it to be ready would only
	// wait out the timeout (if it comes back, it is another object).
	final := func(r Result) bool {
		return r.Deleted() || r.Status == kstatus.CurrentStatus || r.Status == kstatus.FailedStatus
	}
	results, err := run(ctx, client, targets, opts, final)
	if err != nil {
		return results, fmt.Errorf("waiting for readiness: %w", err)
	}
	return results, nil
}

// Deleted waits until the server no longer has any of the targets, or until
// the timeout, and returns their results in the targets' order: Deleted
// for those gone, whatever their status before. The error is only for a
// context that ended before the timeout.
func Deleted(ctx context.Context, client dynamic.Interface, targets []Target, opts Options) ([]Result, error) {
	results, err := run(ctx, client, targets, opts, Result.Deleted)
	if err != nil {
		return results, fmt.Errorf("waiting for the deletion: %w", err)
	}
	return results, nil
}

// run follows the targets, one informer per resource and namespace,
// until final says each is done or the timeout.
func run(ctx context.Context, client dynamic.Interface, targets []Target, opts Options, final func(Result) bool) ([]Result, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = time.Minute
	}
	w := &waiter{client: client, opts: opts, final: final, results: make([]Result, len(targets)),
		done: make([]bool, len(targets)), uids: make([]types.UID, len(targets)),
		listSlots: make(chan struct{}, cluster.MaxListsInFlight)}
	for i, t := range targets {
		w.results[i] = Result{Target: t, Status: kstatus.NotFoundStatus, Reason: "NotFound", Message: "not seen yet"}
		w.uids[i] = t.UID
	}
	waitCtx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	// The informers log a failed WATCH (a server restarting) through the
	// context's logger; the wait reports through its results instead.
	waitCtx = klog.NewContext(waitCtx, klog.Logger{})
	var wg sync.WaitGroup
	for _, g := range groupTargets(targets) {
		wg.Go(func() { w.watchGroup(waitCtx, g) })
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return w.results, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := range w.results {
		if !w.done[i] {
			w.results[i].TimedOut = true
			w.finish(i)
		}
	}
	return w.results, nil
}

// group is the targets of one resource and namespace: one informer follows
// them all.
type group struct {
	gvr       schema.GroupVersionResource
	namespace string
	// indexes are the targets' places by name; not changed once the
	// informers start.
	indexes map[string][]int
}

func groupTargets(targets []Target) []*group {
	type key struct {
		gvr       schema.GroupVersionResource
		namespace string
	}
	byKey := map[key]*group{}
	var groups []*group
	for i, t := range targets {
		k := key{t.Mapping.Resource, t.Namespace}
		g := byKey[k]
		if g == nil {
			g = &group{gvr: k.gvr, namespace: k.namespace, indexes: map[string][]int{}}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.indexes[t.Name] = append(g.indexes[t.Name], i)
	}
	return groups
}

type waiter struct {
	client dynamic.Interface
	opts   Options
	final  func(Result) bool
	// uids are the UIDs of the objects meant, by target: each written only
	// by its group's goroutine (a target without one takes the first
	// object's).
	uids []types.UID
	// listSlots bounds the wait's LISTs open at once (its watches are not
	// bounded: each is one idle connection).
	listSlots chan struct{}

	mu      sync.Mutex
	results []Result
	done    []bool
}

// finish marks result i final and reports it; w.mu is held.
func (w *waiter) finish(i int) {
	w.done[i] = true
	if w.opts.OnResult != nil {
		w.opts.OnResult(i, w.results[i])
	}
}

// observe records the object's new state for the targets at indexes and
// reports whether they are final.
func (w *waiter) observe(indexes []int, obj *unstructured.Unstructured, deleted bool) bool {
	uid := w.uids[indexes[0]]
	switch {
	case obj == nil || deleted:
	case uid == "":
		for _, i := range indexes {
			w.uids[i] = obj.GetUID()
		}
	case obj.GetUID() != uid:
		deleted = true // the object meant is gone; this one took its name
	}
	r := Result{Object: obj}
	if deleted {
		r.Status, r.Reason, r.Message, r.Object = kstatus.NotFoundStatus, ReasonDeleted, "the object was deleted", nil
	} else {
		r.Status, r.Reason, r.Message = w.computeStatus(obj)
	}
	final := w.final(r)
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, i := range indexes {
		if w.done[i] {
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

// computeStatus is the object's status by Options.Status, else by kstatus.
func (w *waiter) computeStatus(obj *unstructured.Unstructured) (kstatus.Status, string, string) {
	if w.opts.Status != nil {
		if s, reason, message, ok := w.opts.Status(obj); ok {
			return s, reason, message
		}
	}
	return ComputeStatus(obj)
}

// fail makes the targets at indexes final with status Unknown.
func (w *waiter) fail(indexes map[string][]int, reason string, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, places := range indexes {
		for _, i := range places {
			if w.done[i] {
				continue
			}
			w.results[i].Status, w.results[i].Reason, w.results[i].Message = kstatus.UnknownStatus, reason, err.Error()
			w.finish(i)
		}
	}
}
