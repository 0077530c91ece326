package apply

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapply/kapply/pkg/apply/prune"
	"github.com/kapply/kapply/pkg/plan"
)

// ErrTampered is the cause of every TamperedError.
var ErrTampered = errors.New("the plan does not match the files it was made from")

// TamperedError refuses a whole plan before anything is written: an item
// writes what the files (ExecuteOptions.Objects) do not give, against the
// live object as verified, or removes what they declare or what is not
// the plan's to prune. A checksum proves only that whoever wrote the file
// could compute one; this check is what makes an edited plan harmless.
type TamperedError struct {
	Items []TamperedItem
}

// TamperedItem is one refused item: its place in the plan, its object and
// why (fields are named, never values).
type TamperedItem struct {
	Index  int
	ID     plan.ID
	Reason string
}

func (e *TamperedError) Error() string {
	var b strings.Builder
	b.WriteString(ErrTampered.Error() + " (edited, or made from other files, -n or --secret-record: plan again); nothing was written:")
	for _, it := range e.Items {
		fmt.Fprintf(&b, "\n  item %d (%s): %s", it.Index+1, it.ID, it.Reason)
	}
	return b.String()
}

func (e *TamperedError) Unwrap() error { return ErrTampered }

// itemCheck is what checking one item before any write found: its object,
// the live object and resourceVersion it was verified at and the item as
// it is sent (a Secret's values restored) — or the event of an item that
// fails alone (changed since the plan, unreadable). Execute writes from it
// without reading the object again. A deferred itemCheck is an item read
// when it runs: a custom resource of a CRD the plan creates.
//
// Of live it holds only what the write needs (see hold): checked, an
// item's live object is let go unless its write or its event needs it.
type itemCheck struct {
	o        *object
	live     *unstructured.Unstructured
	rv       string
	it       plan.Item
	failed   *Event
	warnings []string
	// deferred: read when it runs, from file (its namespace settled).
	deferred bool
	file     *object
	// slim: live is cut to what identifies it and its resourceVersion;
	// content is the digest of what the patch's outcome is told by (see
	// contentDigest), for a patch item.
	slim    bool
	content []byte
}

// planCheck is what items are checked against: the files' objects, the
// kinds the plan's CRDs define, and what the plan may prune; lean says
// the run keeps no event's objects (ExecuteOptions.Lean).
type planCheck struct {
	files    *fileIndex
	defined  map[k8sschema.GroupKind]bool
	secrets  map[plan.ID]*object
	set      *prune.Set
	selector labels.Selector
	all      bool
	lean     bool
}

// checkPlan reads and verifies every item's object (plan.Item.Verify), and
// re-plans each create, patch and apply item from the files' object with
// the planner that made it (planOne's steps) against that live object and
// its record: the action, target and patch (a create's object) must be the
// plan's. A prune or delete item must name an object the files do not
// declare, that is a member of the plan's ApplySet (or matches its prune
// selector). Any other outcome refuses the whole run (a *TamperedError).
// The objects are read once, as Apply reads them (readItems: a LIST per
// resource and namespace holding enough of them, a GET for the others):
// the writes use what was read here, and of it only what they need.
func (r *runner) checkPlan(ctx context.Context, p *plan.Plan, c *planCheck) ([]*itemCheck, error) {
	// The second plan sends nothing (see planObject); its Secret items get
	// their keys as a plan's do.
	r.keys.forPlans = true
	checks := make([]*itemCheck, len(p.Items))
	problems := make([]string, len(p.Items))
	objects := make([]*object, len(p.Items))
	files := make([]*object, len(p.Items))
	all := make([]int, len(p.Items))
	for i := range all {
		all[i] = i
	}
	var mu sync.Mutex
	var read []int
	forEachLimit(each(all), r.opts.Parallel, func(i int) {
		var o *object
		checks[i], problems[i], o, files[i] = r.mapItem(ctx, p.Items[i], c)
		if o != nil {
			objects[i] = o
			mu.Lock()
			read = append(read, i)
			mu.Unlock()
		}
	})
	r.readItems(ctx, objects, read, func(i int, live *unstructured.Unstructured, err error) {
		checks[i], problems[i] = r.checkItem(ctx, p.Items[i], c, objects[i], files[i], live, err)
	})
	var refused []TamperedItem
	for i, problem := range problems {
		if problem != "" {
			refused = append(refused, TamperedItem{Index: i, ID: p.Items[i].ID, Reason: problem})
		}
	}
	if len(refused) > 0 {
		return nil, r.maskError(&TamperedError{Items: refused})
	}
	return checks, nil
}

// mapItem finds the item's file and maps its object: the object to read
// and the file, or what checking it found already (a check, or why the
// run is refused).
func (r *runner) mapItem(ctx context.Context, it plan.Item, c *planCheck) (*itemCheck, string, *object, *object) {
	removal := it.Action == plan.Prune || it.Action == plan.Delete
	file, problem := c.files.declares(it, removal)
	if problem != "" {
		return nil, problem, nil, nil
	}
	o, err := r.objectOfItem(ctx, it, file)
	if err != nil && !removal && c.defined[k8sschema.GroupKind{Group: it.ID.Group, Kind: it.ID.Kind}] {
		// Its kind is served once the plan's CRD is established: nothing
		// of it exists yet. It is re-planned as absent, and read when it
		// runs.
		settled := file.inNamespace(it.ID.Namespace)
		return &itemCheck{deferred: true, file: settled}, r.sameAsReplanned(ctx, it, settled, nil, ""), nil, nil
	}
	if err != nil {
		return &itemCheck{o: o, failed: &Event{Outcome: Failed, Err: err, Object: o.Obj, Source: o.Source}}, "", nil, nil
	}
	return nil, "", o, file
}

// checkItem checks one item against its live object as read (nil:
// absent; readErr: unreadable); the string is why the run is refused.
func (r *runner) checkItem(ctx context.Context, it plan.Item, c *planCheck, o, file *object, live *unstructured.Unstructured, readErr error) (*itemCheck, string) {
	if readErr != nil {
		// Unreadable: this item fails alone.
		return &itemCheck{o: o, failed: readFailed(o, readErr)}, ""
	}
	ctx, sink := withWarningSink(ctx)
	rv, sent, failed := r.verified(ctx, o, it, c.secrets, live)
	check := &itemCheck{o: o, live: live, rv: rv, it: sent, failed: failed, warnings: sink.warnings(o)}
	switch {
	case failed != nil:
		// Changed since the plan: this item fails alone.
		return check, ""
	case it.Action == plan.Prune || it.Action == plan.Delete:
		return check, c.removable(live)
	case it.Action == plan.Unchanged:
		check.hold(c.lean)
		return check, "" // nothing is sent
	}
	problem := unheldKept(sent.KeptLive, file, live)
	if problem == "" {
		problem = r.sameAsReplanned(ctx, sent, file, live, rv)
	}
	check.hold(c.lean)
	return check, problem
}

// removable says why a verified prune or delete item's live object is not
// the plan's to remove ("" when it is).
func (c *planCheck) removable(live *unstructured.Unstructured) string {
	have := live.GetLabels()
	switch {
	case c.set != nil && have[prune.PartOfLabel] == c.set.ID():
		return ""
	case c.selector != nil && !c.selector.Empty() && c.selector.Matches(labels.Set(have)):
		return ""
	case c.all:
		return ""
	case c.set != nil:
		return fmt.Sprintf("it is to be deleted, but it is no member of ApplySet %s (its %s label is %q)", c.set, prune.PartOfLabel, have[prune.PartOfLabel])
	case c.selector != nil && !c.selector.Empty():
		return fmt.Sprintf("it is to be deleted, but its labels do not match the prune selector %q", c.selector)
	}
	return "it is to be deleted, but the run names neither the ApplySet (--applyset) nor the prune selector (-l) it was planned by"
}

// sameAsReplanned re-plans the item from file against live (nil: absent)
// and says where the plan's differs ("" when it does not). The patches are
// compared with rv as their precondition, which the write sets anyway.
func (r *runner) sameAsReplanned(ctx context.Context, it plan.Item, file *object, live *unstructured.Unstructured, rv string) string {
	fresh, err := r.replan(ctx, it, file, live)
	if err != nil {
		return fmt.Sprintf("it cannot be planned again from the files: %v", err)
	}
	if fresh.Action != it.Action {
		return fmt.Sprintf("it is a %s, the files give a %s", it.Action, fresh.Action)
	}
	if it.Action == plan.Create {
		if paths := differing(it.Merged, fresh.Merged); len(paths) > 0 {
			return "the object it creates is not the files' at " + joinPaths(paths)
		}
		return ""
	}
	if it.Patch.Type != fresh.Patch.Type {
		return fmt.Sprintf("its patch is %s, the files give %s", it.Patch.Type, fresh.Patch.Type)
	}
	planned, err := patchBody(it.Patch, rv)
	if err != nil {
		return fmt.Sprintf("its patch cannot be read: %v", err)
	}
	given, err := patchBody(fresh.Patch, rv)
	if err != nil {
		return fmt.Sprintf("the files' patch cannot be read: %v", err)
	}
	if it.Action == plan.Update && len(it.KeptLive) > 0 {
		// The record holds the kept fields at their values when planned,
		// which may have moved since (tolerated for a patch: docs/ignore.md).
		if problem := sameRecordBut(planned, given, it.KeptLive); problem != "" {
			return problem
		}
	}
	if paths := differing(planned, given); len(paths) > 0 {
		what := "its patch differs from the files' at "
		if rv != it.ResourceVersion {
			what = fmt.Sprintf("its patch differs from the files' against the object now (resourceVersion %s, the plan's %s) at ", rv, it.ResourceVersion)
		}
		return what + joinPaths(paths)
	}
	return unguarded(it, fresh)
}

// checkedPlan is checkPlan against the files and prune settings of opts.
func (r *runner) checkedPlan(ctx context.Context, p *plan.Plan, opts ExecuteOptions, secrets map[plan.ID]*object, set *prune.Set) ([]*itemCheck, error) {
	files, err := r.indexFiles(ctx, opts.Objects)
	if err != nil {
		return nil, err
	}
	files.label(set)
	var selector labels.Selector
	if opts.PruneSelector != "" {
		if selector, err = labels.Parse(opts.PruneSelector); err != nil {
			return nil, fmt.Errorf("parsing the prune selector %q: %w", opts.PruneSelector, err)
		}
	}
	return r.checkPlan(ctx, p, &planCheck{files: files, defined: definedByPlan(p, files), secrets: secrets, set: set, selector: selector,
		all: opts.PruneAll, lean: opts.lean()})
}
