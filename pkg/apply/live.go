package apply

import (
	"context"
	"fmt"
	"sync"

	"github.com/kapply/kapply/pkg/load"
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

// liveIndex holds the live objects read by LIST, by request and name. A key
// present with no entry for a name means the object does not exist.
type liveIndex struct {
	lists map[listKey]map[string]*unstructured.Unstructured
}

// lookup returns the listed live object, whether it exists, and whether the
// object's resource and namespace were listed at all.
func (l *liveIndex) lookup(o *load.Object) (live *unstructured.Unstructured, exists, listed bool) {
	if l == nil {
		return nil, false, false
	}
	byName, listed := l.lists[keyOf(o)]
	if !listed {
		return nil, false, false
	}
	live, exists = byName[o.Obj.GetName()]
	return live, exists, true
}

func keyOf(o *load.Object) listKey {
	return listKey{resource: o.Mapping.Resource, namespace: o.Obj.GetNamespace()}
}

// prefetch lists, concurrently, every resource and namespace that holds at
// least listThreshold of the objects. A failed LIST (forbidden, say) is not
// an error: those objects fall back to a GET each.
func (r *runner) prefetch(ctx context.Context, objects []*load.Object, indexes []int) *liveIndex {
	counts := map[listKey]int{}
	for _, i := range indexes {
		if !namespaced(objects[i]) || objects[i].Obj.GetNamespace() != "" {
			counts[keyOf(objects[i])]++
		}
	}
	index := &liveIndex{lists: map[listKey]map[string]*unstructured.Unstructured{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for key, n := range counts {
		if n < listThreshold {
			continue
		}
		wg.Go(func() {
			byName, err := r.list(ctx, key)
			if err != nil {
				return
			}
			mu.Lock()
			index.lists[key] = byName
			mu.Unlock()
		})
	}
	wg.Wait()
	return index
}

func (r *runner) list(ctx context.Context, key listKey) (map[string]*unstructured.Unstructured, error) {
	var list *unstructured.UnstructuredList
	err := r.retryTransient(ctx, func() error {
		var err error
		list, err = r.dynamic.Resource(key.resource).Namespace(key.namespace).List(ctx, metav1.ListOptions{})
		return err
	})
	if apierrors.IsNotFound(err) {
		return map[string]*unstructured.Unstructured{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing %s in %q: %w", key.resource, key.namespace, err)
	}
	byName := make(map[string]*unstructured.Unstructured, len(list.Items))
	for i := range list.Items {
		item := &list.Items[i]
		byName[item.GetName()] = item
	}
	return byName, nil
}
