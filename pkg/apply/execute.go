package apply

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapply/kapply/pkg/history"
	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/plan"
)

// ExecuteOptions configure Applier.Execute: what belongs to the run.
// How the items are written (field manager, server-side, validation,
// namespace, ApplySet, Secret records) is the plan's (plan.Settings).
type ExecuteOptions struct {
	// Cascade is the propagation policy of prune and delete items.
	Cascade metav1.DeletionPropagation
	// Timeout bounds the wait for the plan's CRDs to become established,
	// and the gates of all the plan's waves together (zero:
	// DefaultGateTimeout).
	Timeout time.Duration
	// Waves are how the plan's waves wait: their gates' health rules,
	// and removals gone wave by wave.
	Waves WaveOptions
	// Objects are the files' objects the plan was made from, needed for a
	// Secret whose values a saved plan keeps as digests: their values are
	// put back (plan.Item.WithSecretValues) and must match the digests.
	// Every create, patch and apply item must be what a plan of these
	// objects gives against the live object (see TamperedError), and no
	// prune or delete item may name one of them. They are settled in the
	// plan's namespace and Secret record mode.
	Objects Input
	// PruneSelector and PruneAll are the prune.Options the plan's prune
	// items were planned with when it names no ApplySet: each such item's
	// object must match the selector (or All be set).
	PruneSelector string
	PruneAll      bool
	// OnEvent, when set, is given each item's event as soon as it is
	// final, with the item's place in the plan, from concurrent goroutines.
	OnEvent func(index int, ev Event)
	// Lean is Options.Lean for Execute, with OnEvent set: once OnEvent has
	// an event, the run keeps it without its Plan, Live and Result but
	// what identifies the object (unless it failed or has warnings); and
	// of each item's live object, checked, only what its write needs. A
	// plan of 10,000 items then holds the objects in flight, not every
	// live object until the last is checked.
	Lean bool
	// History, when the plan names an ApplySet, records the run as a
	// revision of it, with Objects' configurations.
	History *history.Options
}

// settings are the run's: the plan's, and the run's own.
func (o ExecuteOptions) settings(p plan.Settings) settings {
	record := lastapplied.RedactSecrets
	if p.PlainSecretRecord {
		record = lastapplied.PlainSecrets
	}
	return settings{WriteOptions: WriteOptions{FieldManager: p.FieldManager, FieldValidation: p.FieldValidation,
		Namespace: p.Namespace, SecretRecord: record, ServerSide: p.ServerSide, ForceConflicts: p.ForceConflicts},
		Options: Options{Timeout: o.Timeout, Waves: o.Waves}, Cascade: o.Cascade}
}

// Execute writes the plan's items to the cluster with the plan's
// settings (plan.Settings), in the plan's order:
// Namespaces, then CRDs (awaited until established when the plan has
// their custom resources), then the other objects, then prunes and
// deletes. Each item's object is read again and checked (plan.Item.Verify)
// and written with the resourceVersion it was checked at as a
// precondition: an item whose object changed since the plan in a way the
// plan depends on, or changes between the check and the write (409), fails
// with a *plan.ChangedError naming what changed; it is never planned again.
// The other items still run. It returns one event per item, in plan order;
// the error is for what stops the whole run (another cluster, an
// unreachable server, an ApplySet parent that could not be written: then
// the events of the items already run are returned too).
func (a *Applier) Execute(ctx context.Context, p *plan.Plan, opts ExecuteOptions) ([]Event, error) {
	if p == nil {
		return nil, errors.New("no plan to execute")
	}
	// A plan built in code skipped Decode's checks: a prune item without
	// a UID would delete whatever object bears the name now.
	if err := plan.Check(p); err != nil {
		return nil, err
	}
	r, err := a.runner(ctx, opts.settings(p.Settings))
	if err != nil {
		return nil, err
	}
	r.opts.FieldManager = p.Settings.FieldManager // chosen per item (managerOf)
	if opts, err = r.rollbackObjects(ctx, p, opts); err != nil {
		return nil, err
	}
	r.knowPlan(p, opts.Objects)
	if err := r.reachServer(ctx); err != nil {
		return nil, err
	}
	if err := p.Cluster.SameAs(r.cluster(ctx)); err != nil {
		return nil, err
	}
	secrets, err := r.fileSecrets(ctx, opts.Objects)
	if err != nil {
		return nil, err
	}
	set, err := r.executeSet(ctx, p.Settings.ApplySet, p)
	if err != nil {
		return nil, err
	}
	r.history = r.planHistory(set, opts)
	checks, err := r.checkedPlan(ctx, p, opts, secrets, set)
	if err != nil {
		return nil, err
	}
	x := &execution{ctx: ctx, r: r, items: p.Items, secrets: secrets, checks: checks, events: make([]Event, len(p.Items)),
		onEvent: opts.OnEvent, lean: opts.lean()}
	groups, writes := itemGroups(p.Items, len(p.Gates))
	gates := r.newGateRun(p.Gates)
	for n, group := range groups {
		// The parent goes after the Namespaces: it may live in one of them.
		if n == 1 {
			if err := r.recordSuperset(ctx, set); err != nil {
				return x.events, r.maskError(err)
			}
		}
		if wave := n / 3; n%3 == 0 && wave > 0 && n < writes && gates != nil {
			if err := gates.pass(ctx, wave, x.objectOf); err != nil {
				// Removals wait for what stays to be written: not sent either.
				x.notSent(groups[n:], err)
				break
			}
		}
		if n > writes && r.opts.Waves.WaitPruned {
			x.awaitRemoved(ctx, groups[n-1])
		}
		// A CRD's event is final once it is established.
		crds := n%3 == 1 && n < writes
		forEachLimit(each(group), r.opts.Parallel, func(i int) { x.run(i, !crds) })
		if crds && len(group) > 0 {
			x.awaitCRDs(ctx, group)
			for _, i := range group {
				x.report(i)
			}
		}
	}
	x.finishSet(ctx, set)
	return x.events, r.maskError(x.setErr)
}

// run executes item i, reporting its event when report is set.
func (x *execution) run(i int, report bool) {
	var check *itemCheck
	if x.checks != nil {
		check = x.checks[i]
	}
	x.events[i] = x.r.executeItem(x.ctx, x.items[i], x.secrets, check)
	if x.checks != nil {
		x.checks[i] = nil // written: what was read is let go
	}
	if report {
		x.report(i)
	}
}

// report masks item i's final event (every event passes here once) and
// hands it to OnEvent.
func (x *execution) report(i int) {
	x.events[i] = x.r.masked(x.events[i])
	if x.onEvent != nil {
		x.onEvent(i, x.events[i])
		if x.lean {
			x.events[i] = x.events[i].Lean()
		}
	}
}

// execution is one Execute run.
type execution struct {
	r       *runner
	items   []plan.Item
	secrets map[plan.ID]*object
	// checks are the items as checkPlan read and verified them.
	checks  []*itemCheck
	events  []Event
	onEvent func(int, Event)
	// lean: an event OnEvent had is kept Lean.
	lean bool
	ctx  context.Context
	// setErr is the failure to record the ApplySet after the run.
	setErr error
}

// knowPlan adds the Secrets of the plan (each item's merged object: a
// create's holds the values it sends) and of the files it was made from to
// those the run masks.
func (r *runner) knowPlan(p *plan.Plan, files Input) {
	r.know(files.Objects...)
	for _, it := range p.Items {
		if it.Merged != nil {
			r.know(&unstructured.Unstructured{Object: it.Merged})
		}
	}
}

// itemGroups splits the items' places into Namespaces, CRDs and the
// other objects of each of the plan's waves (one when it has no gates) —
// the first writes groups — then removals by their Wave (the last wave of
// what they were first: see deleteUndeclared), each in plan order.
func itemGroups(items []plan.Item, waves int) (groups [][]int, writes int) {
	waves = max(waves, 1)
	writes = 3 * waves
	groups = make([][]int, writes+1)
	for i, it := range items {
		gk := k8sschema.GroupKind{Group: it.ID.Group, Kind: it.ID.Kind}
		w := min(it.Wave, waves-1) // plan.Check keeps it in range
		switch {
		case it.Action == plan.Prune || it.Action == plan.Delete:
			for len(groups) <= writes+it.Wave {
				groups = append(groups, nil)
			}
			groups[writes+it.Wave] = append(groups[writes+it.Wave], i)
		case gk == namespaceGK:
			groups[3*w] = append(groups[3*w], i)
		case gk == crdGK:
			groups[3*w+1] = append(groups[3*w+1], i)
		default:
			groups[3*w+2] = append(groups[3*w+2], i)
		}
	}
	return groups, writes
}

// fileSecrets maps and settles the Secrets of in, by identity.
func (r *runner) fileSecrets(ctx context.Context, in Input) (map[plan.ID]*object, error) {
	objects, err := in.objects()
	if err != nil {
		return nil, err
	}
	out := map[plan.ID]*object{}
	for _, o := range objects {
		if o.Obj.GroupVersionKind() != secretGVK {
			continue
		}
		if err := r.prepare(ctx, o); err != nil {
			return nil, errorOf(o, err)
		}
		out[plan.IDOf(o.Obj)] = o
	}
	return out, nil
}

var secretGVK = k8sschema.GroupVersionKind{Version: "v1", Kind: "Secret"}

// objectOfItem is the object an item names, as a run handles it, mapped:
// for a create, the object it sends; for a patch, unchanged or apply item,
// the files' object (file, nil when unknown) as plain apply's events carry
// it — a decoded plan keeps no merged object for these — or else the
// plan's merged object if it has one.
func (r *runner) objectOfItem(ctx context.Context, it plan.Item, file *object) (*object, error) {
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	obj.SetAPIVersion(k8sschema.GroupVersion{Group: it.ID.Group, Version: it.ID.Version}.String())
	obj.SetKind(it.ID.Kind)
	obj.SetName(it.ID.Name)
	obj.SetNamespace(it.ID.Namespace)
	o := &object{Obj: obj, Source: it.Source}
	if err := r.prepare(ctx, o); err != nil {
		return o, err
	}
	// The plan's or the files' object, not modified (a plan may be
	// executed twice at once).
	switch {
	case it.Action == plan.Prune || it.Action == plan.Delete:
	case it.Action == plan.Create && it.Merged != nil:
		o.Obj = &unstructured.Unstructured{Object: it.Merged}
	case file != nil:
		o.Obj = file.Obj
	case it.Merged != nil:
		o.Obj = &unstructured.Unstructured{Object: it.Merged}
	}
	return o, nil
}

// awaitCRDs waits until the CRDs written at places, whose custom resources
// the plan has, are established, failing those that are not; then the
// run's kinds are looked up afresh.
func (x *execution) awaitCRDs(ctx context.Context, places []int) {
	used := map[k8sschema.GroupKind]bool{}
	for _, it := range x.items {
		used[k8sschema.GroupKind{Group: it.ID.Group, Kind: it.ID.Kind}] = true
	}
	for _, i := range places {
		ev := x.events[i]
		if ev.Outcome == Failed || ev.Result == nil {
			continue
		}
		x.r.crdsApplied = true
		o := &object{Obj: ev.Result, Source: ev.Source, Mapping: ev.Mapping}
		if !used[definedKind(o)] {
			continue
		}
		if err := x.r.awaitEstablished(ctx, o); err != nil {
			x.events[i] = o.event(Event{Outcome: Failed, Err: errorOf(o, err), Live: ev.Live})
		}
	}
	if x.r.crdsApplied {
		x.r.resetMapper()
	}
}

// errRedacted refuses a Secret item whose values the plan keeps as
// digests when the files' Secret was not given.
var errRedacted = errors.New("the plan keeps this Secret's values as digests, and the files' objects (ExecuteOptions.Objects) hold no such Secret: give the files the plan was made from, with the namespace it was made with")

// executeItem writes the item as check read and verified it, or (a
// deferred check: a custom resource of a CRD the plan creates) reads the
// item's object, verifies the item against it and writes it; the server's
// warnings about its requests become the event's.
func (r *runner) executeItem(ctx context.Context, it plan.Item, secrets map[plan.ID]*object, check *itemCheck) Event {
	if check == nil || check.deferred {
		var file *object
		if check != nil {
			file = check.file
		}
		o, err := r.objectOfItem(ctx, it, file)
		if err != nil {
			return o.event(Event{Outcome: Failed, Err: errorOf(o, err)})
		}
		check = &itemCheck{o: o}
		live, err := r.readLive(ctx, o)
		if err != nil {
			check.failed = readFailed(o, err)
		} else {
			check.live = live
			check.rv, check.it, check.failed = r.verified(ctx, o, it, secrets, live)
		}
	}
	o := check.o
	ctx, sink := withWarningSink(ctx)
	var ev Event
	if check.failed != nil {
		ev = *check.failed
	} else {
		ev = r.sendVerified(ctx, it, secrets, check)
	}
	ev.Warnings = append(append(append(ev.Warnings, it.Warnings...), check.warnings...), sink.warnings(o)...)
	ev.Wave, ev.WaveReason = it.Wave, it.WaveReason
	if ev.Err != nil {
		ev.Err = errorOf(o, ev.Err)
	}
	return ev
}

// readLive reads o's live object (nil: absent).
func (r *runner) readLive(ctx context.Context, o *object) (*unstructured.Unstructured, error) {
	live, err := r.get(ctx, r.resource(o), o)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return live, nil
}

// readFailed is the event of an item whose object could not be read.
func readFailed(o *object, err error) *Event {
	ev := o.event(Event{Outcome: Failed, Err: fmt.Errorf("reading live object: %w", err)})
	return &ev
}

// verified verifies the item against its live object (nil: absent): the
// resourceVersion the write requires and the item as it is sent (a
// Secret's values restored from the files); or the failed event of an item
// that must not run.
func (r *runner) verified(ctx context.Context, o *object, it plan.Item, secrets map[plan.ID]*object, live *unstructured.Unstructured) (string, plan.Item, *Event) {
	fail := func(err error) (string, plan.Item, *Event) {
		ev := o.event(Event{Outcome: Failed, Err: err, Live: live})
		return "", it, &ev
	}
	var err error
	if it, err = r.keyItem(ctx, it); err != nil {
		return fail(err)
	}
	rv, err := it.Verify(live)
	if err != nil {
		return fail(err)
	}
	if it.HasRedactedValues() {
		if it, err = r.withFileSecret(it, secrets, live); err != nil {
			return fail(err)
		}
		// The event's object holds the values the write sends, so that a
		// server error quoting them is masked (as the file's object is
		// in a run without a plan); the plan's object keeps digests.
		o.Obj = secrets[it.ID].Obj
		if it.Action == plan.Create {
			o.Obj = &unstructured.Unstructured{Object: it.Merged}
		}
	}
	return rv, it, nil
}

// withFileSecret puts the files' Secret values back into the item.
func (r *runner) withFileSecret(it plan.Item, secrets map[plan.ID]*object, live *unstructured.Unstructured) (plan.Item, error) {
	found, ok := secrets[it.ID]
	if !ok {
		return it, errRedacted
	}
	file := &object{Obj: found.Obj, Source: found.Source, Mapping: found.Mapping, key: it.DigestKey}
	// The plan was made from the file with the keys its rules keep at
	// live's values (the item's KeptLive): so is the file checked.
	if live != nil && len(it.KeptLive) > 0 {
		kept := *file
		kept.Obj = &unstructured.Unstructured{Object: it.WithKeptSecretValues(file.Obj.Object, live.Object)}
		file = &kept
	}
	body, _, err := r.withLastApplied(file, live)
	if err != nil {
		return it, err
	}
	return it.WithSecretValues(body)
}
