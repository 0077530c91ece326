package cluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// fakeServer serves a list of n objects in pages as the API server does:
// a continue token is the offset of the next page; expire says whether a
// request with a continue token is refused as too old.
type fakeServer struct {
	n        int
	requests []metav1.ListOptions
	expire   func(call int) bool
}

func (s *fakeServer) page(_ context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	s.requests = append(s.requests, opts)
	if opts.Continue != "" && s.expire != nil && s.expire(len(s.requests)) {
		return nil, apierrors.NewResourceExpired("the provided continue parameter is too old")
	}
	from, _ := strconv.Atoi(opts.Continue)
	to := s.n
	if opts.Limit > 0 {
		to = min(from+int(opts.Limit), s.n)
	}
	list := &unstructured.UnstructuredList{Object: map[string]any{}}
	list.SetResourceVersion(fmt.Sprint(len(s.requests)))
	if to < s.n {
		list.SetContinue(strconv.Itoa(to))
	}
	for i := from; i < to; i++ {
		item := unstructured.Unstructured{}
		item.SetName(fmt.Sprintf("o%d", i))
		item.SetUID(types.UID("uid-" + strconv.Itoa(i)))
		list.Items = append(list.Items, item)
	}
	return list, nil
}

func collect(t *testing.T, s *fakeServer, chunkSize int64) ([]string, string, error) {
	t.Helper()
	var names []string
	rv, err := EachItem(context.Background(), chunkSize, metav1.ListOptions{}, s.page, func(u *unstructured.Unstructured) error {
		names = append(names, u.GetName())
		return nil
	})
	return names, rv, err
}

func TestEachItemPages(t *testing.T) {
	s := &fakeServer{n: 1200}
	names, _, err := collect(t, s, DefaultChunkSize)
	if err != nil || len(names) != 1200 || names[1199] != "o1199" {
		t.Fatalf("got %d items, err %v", len(names), err)
	}
	if len(s.requests) != 3 || s.requests[0].Limit != 500 || s.requests[0].Continue != "" || s.requests[2].Continue != "1000" {
		t.Errorf("requests %+v; want 3 pages of 500", s.requests)
	}
}

func TestEachItemWithoutChunks(t *testing.T) {
	s := &fakeServer{n: 1200}
	names, _, err := collect(t, s, 0)
	if err != nil || len(names) != 1200 || len(s.requests) != 1 || s.requests[0].Limit != 0 {
		t.Errorf("%d items, err %v, requests %+v; want one LIST without limit", len(names), err, s.requests)
	}
}

// An expired continue token restarts the LIST; the items of the pages
// before it are not handed out twice.
func TestEachItemRestartsAnExpiredList(t *testing.T) {
	s := &fakeServer{n: 1200, expire: func(call int) bool { return call == 2 }}
	names, rv, err := collect(t, s, 500)
	if err != nil || len(names) != 1200 {
		t.Fatalf("%d items, err %v; want 1200 once each", len(names), err)
	}
	// first page, expired, then 3 pages from the start
	if len(s.requests) != 5 || s.requests[2].Continue != "" || s.requests[2].Limit != 500 {
		t.Errorf("requests %+v", s.requests)
	}
	if rv != "5" {
		t.Errorf("resourceVersion %q; want the restarted list's, 5", rv)
	}
}

// A restart that expires too reads the list in one answer, as client-go's
// pager.List falls back.
func TestEachItemFallsBackToAWholeList(t *testing.T) {
	s := &fakeServer{n: 1200, expire: func(int) bool { return true }}
	names, _, err := collect(t, s, 500)
	if err != nil || len(names) != 1200 {
		t.Fatalf("%d items, err %v", len(names), err)
	}
	last := s.requests[len(s.requests)-1]
	if len(s.requests) != 5 || last.Limit != 0 || last.Continue != "" {
		t.Errorf("requests %+v; want page, expired, page, expired, whole list", s.requests)
	}
}

// Any other error ends the LIST, and so does fn's.
func TestEachItemErrors(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "", errors.New("no"))
	_, err := EachItem(context.Background(), 500, metav1.ListOptions{}, func(context.Context, metav1.ListOptions) (*unstructured.UnstructuredList, error) {
		return nil, forbidden
	}, func(*unstructured.Unstructured) error { return nil })
	if !apierrors.IsForbidden(err) {
		t.Errorf("err %v; want the Forbidden", err)
	}
	stop := errors.New("stop")
	s := &fakeServer{n: 1200}
	_, err = EachItem(context.Background(), 500, metav1.ListOptions{}, s.page, func(*unstructured.Unstructured) error { return stop })
	if !errors.Is(err, stop) {
		t.Errorf("err %v; want fn's", err)
	}
}

// fn's error is the LIST's even when the pager, reading ahead, meets an
// expired continue token meanwhile: a restart would skip the item fn
// refused (it was seen) and end without error.
func TestEachItemKeepsFnErrorWhenTheNextPageExpires(t *testing.T) {
	expiredRead := make(chan struct{})
	var once sync.Once
	page := func(_ context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
		if opts.Continue != "" {
			defer once.Do(func() { close(expiredRead) })
			return nil, apierrors.NewResourceExpired("the provided continue parameter is too old")
		}
		list := &unstructured.UnstructuredList{Object: map[string]any{}}
		list.SetContinue("1")
		item := unstructured.Unstructured{}
		item.SetName("bad")
		item.SetUID("uid-bad")
		list.Items = append(list.Items, item)
		return list, nil
	}
	refused := errors.New("cannot decode bad")
	calls := 0
	_, err := EachItem(context.Background(), 1, metav1.ListOptions{}, page, func(*unstructured.Unstructured) error {
		calls++
		if calls == 1 {
			<-expiredRead // the read-ahead of page 2 has failed
		}
		return refused
	})
	if !errors.Is(err, refused) {
		t.Errorf("err %v after %d calls; want fn's error", err, calls)
	}
}
