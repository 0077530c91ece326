// Package cluster is the way kapply talks to an API server. So far it holds
// the paginated LIST that every LIST of a run goes through, the one retry
// rule of a run's requests (Retries, with TakeRetryAfter on the transport)
// and the rate limiter its clients share.
package cluster

import (
	"context"
	"fmt"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/pager"
)

// DefaultChunkSize is the number of objects a LIST asks for per page:
// kubectl's --chunk-size default (cmdutil.DefaultChunkSize).
const DefaultChunkSize int64 = 500

// MaxListsInFlight bounds the LISTs one run has open at once: one per
// resource and namespace could otherwise be hundreds.
const MaxListsInFlight = 8

// PageFunc reads one page of a LIST with the options given (limit and
// continue set by the pager).
type PageFunc func(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error)

// EachItem lists in pages of chunkSize objects (chunkSize ≤ 0: the whole
// list in one answer, kubectl's --chunk-size=0), handing each item to fn as
// its page is decoded, so that no more than the page being handed out and
// the next one being read are held. It returns the resourceVersion of the
// list it read.
//
// A continue token the server no longer honours (410 Expired: "the
// provided continue parameter is too old") restarts the LIST once from the
// start, on a fresh snapshot; if that one expires too, the list is read in
// one answer, as client-go's pager.List falls back. Items handed out
// before a restart are not handed out again (by UID, else namespace and
// name): fn sees each object once, as the snapshot that first listed it
// had it.
//
// client-go's pager.ListPager does the paging (EachListItem); only its
// fallback is added here: EachListItem returns the expiry error, and
// pager.List, which falls back, gathers every page into one list first.
func EachItem(ctx context.Context, chunkSize int64, opts metav1.ListOptions, page PageFunc, fn func(*unstructured.Unstructured) error) (string, error) {
	seen := sets.New[string]()
	// fnFailed keeps fn's error from being taken for the pager's: the
	// pager reads the next page while fn runs, and an expiry it meets
	// then must not restart a LIST fn ended (the restart would skip the
	// item fn refused, as seen, and end without its error).
	fnFailed := false
	each := func(obj runtime.Object) error {
		item, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return fmt.Errorf("a LIST gave a %T, not an object", obj)
		}
		id := identity(item)
		if seen.Has(id) {
			return nil
		}
		seen.Insert(id)
		err := fn(item)
		fnFailed = err != nil
		return err
	}
	// The pager reads pages in a goroutine of its own, which may outlive
	// EachListItem when fn fails: what it learns is kept atomically.
	var rv atomic.Value
	rv.Store("")
	for attempt := 0; ; attempt++ {
		size := chunkSize
		if attempt == 2 {
			size = 0
		}
		var expired atomic.Bool
		p := &pager.ListPager{PageSize: max(size, 0), PageBufferSize: 0,
			PageFn: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				list, err := page(ctx, o)
				if err != nil {
					expired.Store(o.Continue != "" && (apierrors.IsResourceExpired(err) || apierrors.IsGone(err)))
					return nil, err
				}
				rv.Store(list.GetResourceVersion())
				return list, nil
			}}
		err := p.EachListItemWithAlloc(ctx, opts, each)
		if err == nil || fnFailed || !expired.Load() || attempt == 2 {
			return rv.Load().(string), err
		}
	}
}

// identity tells an object apart across snapshots: its UID, or its
// namespace and name when a server leaves the UID out.
func identity(item *unstructured.Unstructured) string {
	if uid := item.GetUID(); uid != types.UID("") {
		return string(uid)
	}
	return item.GetNamespace() + "/" + item.GetName()
}
