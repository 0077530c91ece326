package wait

import (
	"context"
	"maps"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// watchGroup follows the group's objects with an informer
// (watchtools.UntilWithSync) until each is final or ctx ends. The informer
// lists, then watches from the list's resourceVersion; it watches again
// after a watch ends, and lists again when the resourceVersion expired.
func (w *waiter) watchGroup(ctx context.Context, g *group) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// pending are the targets not final yet, by name; only this goroutine
	// reads it (UntilWithSync calls absent and changed on it).
	pending := maps.Clone(g.indexes)
	observe := func(name string, obj *unstructured.Unstructured, deleted bool) {
		if indexes, ok := pending[name]; ok && w.observe(indexes, obj, deleted) {
			delete(pending, name)
		}
	}
	// absent runs once the first LIST is in the store: a target it lacks
	// was deleted before it (the objects it has come as events).
	absent := func(store cache.Store) (bool, error) {
		for name := range pending {
			_, exists, err := store.GetByKey(storeKey(g.namespace, name))
			if err == nil && !exists {
				observe(name, nil, true)
			}
		}
		return len(pending) == 0, nil
	}
	changed := func(ev watch.Event) (bool, error) {
		if obj, ok := ev.Object.(*unstructured.Unstructured); ok {
			observe(obj.GetName(), obj, ev.Type == watch.Deleted)
		}
		return len(pending) == 0, nil
	}
	listFailed := make(chan error, 1)
	deadline, _ := ctx.Deadline()
	lw := w.listWatch(ctx, g, deadline, func(err error) {
		select {
		case listFailed <- err:
		default:
		}
		cancel()
	})
	_, err := watchtools.UntilWithSync(ctx, lw, &unstructured.Unstructured{}, absent, changed)
	select {
	case err := <-listFailed:
		w.fail(pending, ReasonListFailed, err)
	default:
		// UntilWithSync's other errors are the end of ctx (the timeout,
		// reported by run) or a watch closed by the informer itself.
		if err != nil && ctx.Err() == nil {
			w.fail(pending, "WatchFailed", err)
		}
	}
}

// storeKey is the informer store's key of an object (MetaNamespaceKeyFunc).
func storeKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// listWatch lists and watches the group's resource in its namespace,
// filtered to the one name when only one object of it is waited for. Other
// objects are dropped from lists and watches, so the informer's store
// holds only the targets. A LIST that Options.Retry gives up on is handed
// to giveUp. Each WATCH asks the server to keep it open until deadline (the
// informer asks for 5 to 10 minutes), so one watch serves a wait.
func (w *waiter) listWatch(caller context.Context, g *group, deadline time.Time, giveUp func(error)) cache.ListerWatcher {
	var client dynamic.ResourceInterface = w.client.Resource(g.gvr)
	if g.namespace != "" {
		client = w.client.Resource(g.gvr).Namespace(g.namespace)
	}
	var selector string
	if len(g.indexes) == 1 {
		for name := range g.indexes {
			selector = fields.OneTermEqualSelector("metadata.name", name).String()
		}
	}
	wanted := func(obj runtime.Object) bool {
		u, ok := obj.(*unstructured.Unstructured)
		return !ok || g.indexes[u.GetName()] != nil
	}
	return listThenWatch{&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			ctx = withValuesOf{ctx, caller}
			// The informer's first LIST asks the watch cache (resourceVersion
			// "0"), which may not have the object just applied yet: a target
			// missing there would count as deleted. Read the current state.
			opts.FieldSelector, opts.ResourceVersion, opts.ResourceVersionMatch = selector, "", ""
			// The informer's pager asks for pages of 500 (limit, then
			// continue) and falls back to one answer when a continue token
			// expires; its relists from a resourceVersion are not paged
			// (client-go's choice, for the watch cache), and a limit set
			// here would cut the fallback's one answer to a page. At most
			// cluster.MaxListsInFlight pages are read at once.
			select {
			case w.listSlots <- struct{}{}:
				defer func() { <-w.listSlots }()
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
			var list *unstructured.UnstructuredList
			err := w.retry(ctx, func() (err error) {
				list, err = client.List(ctx, opts)
				return err
			})
			if apierrors.IsNotFound(err) {
				// The resource is no longer served (its CRD removed): its
				// objects are gone, as kubectl's wait counts a 404.
				return &unstructured.UnstructuredList{Object: map[string]any{}}, nil
			}
			if err != nil {
				if w.opts.Retry != nil && ctx.Err() == nil {
					giveUp(err)
				}
				return nil, err
			}
			list.Items = slices.DeleteFunc(list.Items, func(u unstructured.Unstructured) bool { return !wanted(&u) })
			return list, nil
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			ctx = withValuesOf{ctx, caller}
			opts.FieldSelector = selector
			if !deadline.IsZero() {
				seconds := max(int64(time.Until(deadline)/time.Second)+1, 1)
				opts.TimeoutSeconds = &seconds
			}
			watcher, err := client.Watch(ctx, opts)
			if err != nil {
				return nil, err
			}
			return newFilteredWatch(watcher, func(ev watch.Event) bool {
				switch ev.Type {
				case watch.Added, watch.Modified, watch.Deleted:
					return wanted(ev.Object)
				}
				return true // bookmarks and errors drive the informer
			}), nil
		},
	}}
}

// listThenWatch makes the informer LIST, then WATCH, and never open a
// watch-list stream (client-go's WatchListClient): the LIST goes through
// Options.Retry, so a permanent error (Forbidden) ends the wait for the
// group at once and transient ones follow the caller's one rule, where a
// stream would fall back to a LIST only after failing by its own rules.
type listThenWatch struct{ *cache.ListWatch }

// IsWatchListSemanticsUnSupported tells the reflector not to use
// watch-list (see watchlist.DoesClientNotSupportWatchListSemantics).
func (listThenWatch) IsWatchListSemanticsUnSupported() bool { return true }

// retry runs request through Options.Retry, or once without it.
func (w *waiter) retry(ctx context.Context, request func() error) error {
	if w.opts.Retry == nil {
		return request()
	}
	return w.opts.Retry(ctx, request)
}

// withValuesOf is the informer's context (its cancellation) carrying also
// the values of the caller's: the informer of watchtools.UntilWithSync
// starts from a context of its own, and the requests would lose what the
// caller's context holds for them (pkg/cluster's warning sink).
type withValuesOf struct {
	context.Context
	caller context.Context
}

func (c withValuesOf) Value(key any) any {
	if v := c.Context.Value(key); v != nil {
		return v
	}
	return c.caller.Value(key)
}
