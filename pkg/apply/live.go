package apply

import (
	"context"
	"fmt"
	"sync"

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
// the LISTs answer.
type liveIndex struct {
	// lists is written before any LIST starts and only read after.
	lists map[listKey]*listing
}

// listing is one LIST. done is closed once it has answered; byName is then
// its objects by name (nil if it failed: those objects fall back to a GET
// each), less those taken.
type listing struct {
	done    chan struct{}
	mu      sync.Mutex
	byName  map[string]*unstructured.Unstructured
	indexes []int
}

// take returns the listed live object, whether it exists, and whether the
// object's resource and namespace were listed at all, waiting for the LIST
// to answer. The object is forgotten: each object is planned once (the run
// refuses duplicates), and what has been planned need not be held.
func (l *liveIndex) take(o *object) (live *unstructured.Unstructured, exists, listed bool) {
	if l == nil {
		return nil, false, false
	}
	lst, ok := l.lists[keyOf(o)]
	if !ok {
		return nil, false, false
	}
	<-lst.done
	lst.mu.Lock()
	defer lst.mu.Unlock()
	if lst.byName == nil {
		return nil, false, false
	}
	name := o.Obj.GetName()
	live, exists = lst.byName[name]
	delete(lst.byName, name)
	return live, exists, true
}

func keyOf(o *object) listKey {
	return listKey{resource: o.Mapping.Resource, namespace: o.Obj.GetNamespace()}
}

// startLists lists, concurrently, every resource and namespace that holds
// at least listThreshold of the objects, and returns the order in which to
// apply the objects: at once those not listed, the others as their LIST
// answers — planning one resource's objects while the server still lists
// the next, and never holding every listed object before the first is
// planned. A failed LIST (forbidden, say) is not an error: those objects
// fall back to a GET each. Once a LIST finds objects, the schema of their
// kind is resolved (objects to create plan nothing), on schemas.
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
			index.lists[key] = &listing{done: make(chan struct{}), indexes: listed}
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
			byName, err := r.list(ctx, key, r.opts.NoManagedFields && !r.opts.ServerSide)
			if err == nil {
				lst.byName = byName
			}
			close(lst.done)
			if len(byName) > 0 {
				r.prefetchSchema(objects[lst.indexes[0]], schemas)
			}
			for _, i := range lst.indexes {
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

// prefetchSchema resolves the schema of o's kind in the background, so
// that planning finds it ready instead of every worker waiting for OpenAPI
// documents one group-version at a time. The resolver computes each kind
// once; a failure is not kept, so planning tries again and reports its own
// error. Server-side apply plans nothing.
func (r *runner) prefetchSchema(o *object, schemas *sync.WaitGroup) {
	if r.opts.ServerSide || r.schemas == nil {
		return
	}
	gvk := o.Obj.GroupVersionKind()
	schemas.Go(func() { _, _ = r.schemas.Kind(gvk) })
}

// list reads the live objects of one resource and namespace by name,
// without their managedFields when noManagedFields is set.
func (r *runner) list(ctx context.Context, key listKey, noManagedFields bool) (map[string]*unstructured.Unstructured, error) {
	var items []*unstructured.Unstructured
	err := r.retryTransient(ctx, func() error {
		var err error
		items, err = r.listItems(ctx, key)
		return err
	})
	if apierrors.IsNotFound(err) {
		return map[string]*unstructured.Unstructured{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing %s in %q: %w", key.resource, key.namespace, err)
	}
	byName := make(map[string]*unstructured.Unstructured, len(items))
	for _, item := range items {
		if noManagedFields {
			unstructured.RemoveNestedField(item.Object, "metadata", "managedFields")
		}
		byName[item.GetName()] = item
	}
	return byName, nil
}

// listItems makes one LIST request and returns its items.
func (r *runner) listItems(ctx context.Context, key listKey) ([]*unstructured.Unstructured, error) {
	if r.lists == nil {
		list, err := r.dynamic.Resource(key.resource).Namespace(key.namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		items := make([]*unstructured.Unstructured, len(list.Items))
		for i := range list.Items {
			items[i] = &list.Items[i]
		}
		return items, nil
	}
	data, err := r.listRaw(ctx, key)
	if err != nil {
		return nil, err
	}
	return decodeList(data)
}
