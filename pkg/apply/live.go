package apply

import (
	"context"
	"sync"

	"github.com/kapply/kapply/pkg/cluster"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// listThreshold is the number of objects of one resource and namespace from
// which one LIST is cheaper than a GET each.
const listThreshold = 4

// listKey is one LIST request: a resource in a namespace.
type listKey struct {
	resource  schema.GroupVersionResource
	namespace string
}

// liveIndex holds the live objects read by LIST, by request and name, as
// the LISTs' pages answer.
type liveIndex struct {
	// lists is written before any LIST starts and only read after.
	lists map[listKey]*listing
}

// listing is one LIST. An object goes on the run's order once its place
// is settled: found on a page, or missing when the LIST ended (failed set:
// it falls back to a GET). Only the run's own objects are kept, and only
// until planned: a namespace's other objects go with their page.
type listing struct {
	indexes []int
	mu      sync.Mutex
	// wanted are the names of the objects the LIST has not found yet.
	wanted map[string]int
	found  map[string]*unstructured.Unstructured
	failed bool
}

// take returns the listed live object, whether it exists, and whether the
// object's resource and namespace were listed at all. The object is
// forgotten: each object is planned once (the run refuses duplicates), and
// what has been planned need not be held. Only objects the run's order has
// given are taken, so their LIST has settled them.
func (l *liveIndex) take(o *object) (live *unstructured.Unstructured, exists, listed bool) {
	if l == nil {
		return nil, false, false
	}
	lst, ok := l.lists[keyOf(o)]
	if !ok {
		return nil, false, false
	}
	lst.mu.Lock()
	defer lst.mu.Unlock()
	name := o.Obj.GetName()
	if live, ok := lst.found[name]; ok {
		delete(lst.found, name)
		return live, true, true
	}
	return nil, false, !lst.failed
}

func keyOf(o *object) listKey {
	return listKey{resource: o.Mapping.Resource, namespace: o.Obj.GetNamespace()}
}

// startLists lists, at most cluster.MaxListsInFlight at once, every
// resource and namespace that holds at least listThreshold of the objects,
// and returns the order in which to apply the objects: at once those not
// listed, the others as the pages of their LIST find them (those missing
// once it ends) — objects are planned while the server still lists the rest,
// and never holding every listed object before the first is planned. A
// failed LIST (forbidden, say) is not an error: the objects it had not
// found fall back to a GET each. Once a LIST finds objects, the schema of
// their kind is resolved (objects to create plan nothing), on schemas.
func (r *runner) startLists(ctx context.Context, objects []*object, indexes []int, schemas *sync.WaitGroup) (*liveIndex, <-chan int) {
	index := &liveIndex{lists: map[listKey]*listing{}}
	byKey := map[listKey][]int{}
	for _, i := range indexes {
		if !namespaced(objects[i]) || objects[i].Obj.GetNamespace() != "" {
			key := keyOf(objects[i])
			byKey[key] = append(byKey[key], i)
		}
	}
	order := make(chan int, len(indexes))
	for key, listed := range byKey {
		if len(listed) >= listThreshold {
			wanted := make(map[string]int, len(listed))
			for _, i := range listed {
				wanted[objects[i].Obj.GetName()] = i
			}
			index.lists[key] = &listing{indexes: listed, wanted: wanted, found: map[string]*unstructured.Unstructured{}}
		}
	}
	for _, i := range indexes {
		if _, listed := index.lists[keyOf(objects[i])]; !listed {
			order <- i
		}
	}
	var lists sync.WaitGroup
	for key, lst := range index.lists {
		lists.Go(func() {
			var prefetched sync.Once
			err := r.eachListed(ctx, key, metav1.ListOptions{}, func(item *unstructured.Unstructured) error {
				if i, ok := lst.settle(item, r.opts.NoManagedFields && !r.opts.ServerSide); ok {
					prefetched.Do(func() { r.prefetchSchema(objects[i], schemas) })
					order <- i
				}
				return nil
			})
			for _, i := range lst.end(err, objects) {
				order <- i
			}
		})
	}
	go func() {
		lists.Wait()
		close(order)
	}()
	return index, order
}

// settle keeps item if the run applies an object of its name, and returns
// that object's index.
func (lst *listing) settle(item *unstructured.Unstructured, noManagedFields bool) (int, bool) {
	lst.mu.Lock()
	defer lst.mu.Unlock()
	name := item.GetName()
	i, ok := lst.wanted[name]
	if !ok {
		return 0, false
	}
	if noManagedFields {
		unstructured.RemoveNestedField(item.Object, "metadata", "managedFields")
	}
	delete(lst.wanted, name)
	lst.found[name] = item
	return i, true
}

// end settles the objects the LIST did not find, after it ended with err,
// and returns their indexes: missing, or to be read by a GET each if the
// LIST failed. A resource the server does not serve (404) holds nothing.
func (lst *listing) end(err error, objects []*object) []int {
	lst.mu.Lock()
	defer lst.mu.Unlock()
	lst.failed = err != nil && !apierrors.IsNotFound(err)
	var rest []int
	for _, i := range lst.indexes {
		if _, ok := lst.wanted[objects[i].Obj.GetName()]; ok {
			rest = append(rest, i)
		}
	}
	lst.wanted = nil
	return rest
}

// prefetchSchema resolves the schema of o's kind in the background, so
// that the plan finds it ready instead of every worker waiting for OpenAPI
// documents one group-version at a time. The resolver computes each kind
// once; a failure is not kept, so the plan tries again and reports its own
// error. Server-side apply plans nothing.
func (r *runner) prefetchSchema(o *object, schemas *sync.WaitGroup) {
	if r.opts.ServerSide || r.schemas == nil {
		return
	}
	gvk := o.Obj.GroupVersionKind()
	schemas.Go(func() { _, _ = r.schemas.Kind(gvk) })
}

// eachListed lists the objects of one resource and namespace, in pages of
// the run's chunk size, handing each to fn (see cluster.EachItem); each
// page is retried as any read. At most cluster.MaxListsInFlight LISTs of
// the run are open at once.
func (r *runner) eachListed(ctx context.Context, key listKey, opts metav1.ListOptions, fn func(*unstructured.Unstructured) error) error {
	select {
	case r.listSlots <- struct{}{}:
		defer func() { <-r.listSlots }()
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	_, err := cluster.EachItem(ctx, r.opts.chunkSize(), opts, func(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
		var page *unstructured.UnstructuredList
		err := r.retryTransient(ctx, func() error {
			var err error
			page, err = r.listPage(ctx, key, opts)
			return err
		})
		return page, err
	}, fn)
	return err
}

// listPage makes one LIST request and returns its page.
func (r *runner) listPage(ctx context.Context, key listKey, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	if r.lists == nil {
		return r.dynamic.Resource(key.resource).Namespace(key.namespace).List(ctx, opts)
	}
	return cluster.RawList(ctx, r.lists, key.resource, key.namespace, opts)
}
