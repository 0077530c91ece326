package apply

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/plan"
)

// readItems reads the live objects of the items at indexes (mapped, in
// objects) as Apply reads a run's objects (startLists): one paged LIST per
// resource and namespace holding at least listThreshold of them, a GET
// for each of the others, and fn gets each object as it comes (nil:
// absent; err: unreadable), at most Parallel at once. No LIST page is held
// past the items it found, and each found object only until fn returns.
func (r *runner) readItems(ctx context.Context, objects []*object, indexes []int, fn func(i int, live *unstructured.Unstructured, err error)) {
	listed, alone := distinctObjects(objects, indexes)
	schemas := &sync.WaitGroup{}
	lives, order := r.startLists(ctx, objects, listed, schemas)
	read := func(lives *liveIndex) func(int) {
		return func(i int) {
			live, exists, wasListed := lives.take(objects[i])
			var err error
			switch {
			case !wasListed:
				live, err = r.readLive(ctx, objects[i])
			case !exists:
				live = nil
			}
			fn(i, live, err)
		}
	}
	forEachLimit(order, r.opts.Parallel, read(lives))
	forEachLimit(each(alone), r.opts.Parallel, read(nil))
	schemas.Wait()
}

// distinctObjects splits indexes into the first item naming each object
// and the others (a plan.Check'd plan has none), which are read alone: a
// LIST settles each name once.
func distinctObjects(objects []*object, indexes []int) (first, others []int) {
	type named struct {
		key  listKey
		name string
	}
	seen := make(map[named]bool, len(indexes))
	for _, i := range indexes {
		n := named{keyOf(objects[i]), objects[i].Obj.GetName()}
		if seen[n] {
			others = append(others, i)
			continue
		}
		seen[n] = true
		first = append(first, i)
	}
	return first, others
}

// lean says the run keeps no event's objects once OnEvent has it.
func (o ExecuteOptions) lean() bool { return o.Lean && o.OnEvent != nil }

// hold lets go of what the item's write does not need of its live object
// in a lean run (whose events keep no objects): a patch is told configured
// or unchanged by its resourceVersion and a digest of live's content, an
// unchanged item by nothing. Live stays whole for a server-side apply
// (ownership upgrade, shared record), a removal (its event's object is
// live), a Secret (its values are masked in errors) and a failure.
func (c *itemCheck) hold(lean bool) {
	live := c.live
	if !lean || live == nil || c.failed != nil || c.it.ID.Group == "" && c.it.ID.Kind == "Secret" {
		return
	}
	switch c.it.Action {
	case plan.Update:
		c.content = contentDigest(live, writesStatus(c.it))
	case plan.Unchanged:
	default:
		return
	}
	slim := identity(live)
	slim.SetResourceVersion(live.GetResourceVersion())
	c.live, c.slim = slim, true
}

// unslimmed is ev, the event of an item whose live object hold let go,
// as it would be with the whole object: a patch whose written content is
// live's is unchanged (writeOutcome), and a failure's event holds the
// object as it is now (read again: failures keep their objects).
func (r *runner) unslimmed(ctx context.Context, o *object, c *itemCheck, ev Event) Event {
	if !c.slim {
		return ev
	}
	switch {
	case ev.Outcome == Failed:
		if live, err := r.readLive(ctx, o); err == nil && live != nil {
			ev.Live = live
		}
	case ev.Outcome == Configured && c.content != nil && ev.Result != nil &&
		bytes.Equal(contentDigest(ev.Result, writesStatus(c.it)), c.content):
		ev.Outcome = Unchanged
	}
	return ev
}

// writesStatus tells whether the item's write counts status in telling
// configured from unchanged (as sendItem does).
func writesStatus(it plan.Item) bool {
	return it.Subresource != "" || it.Action == plan.Update && patchSetsStatus(it.Patch)
}

// contentDigest is a digest of what writeOutcome compares of u.
func contentDigest(u *unstructured.Unstructured, withStatus bool) []byte {
	data, err := json.Marshal(storedContent(u, withStatus))
	if err != nil {
		return nil // never equal: the outcome stays configured
	}
	sum := sha256.Sum256(data)
	return sum[:]
}
