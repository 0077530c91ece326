package apply

import (
	"context"
	"errors"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapply/kapply/pkg/apply/prune"
	"github.com/kapply/kapply/pkg/cluster"
	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/plan"
)

// PlanOptions configure Applier.Plan: what Apply would be told, less what
// only a write needs.
type PlanOptions struct {
	// Write is what the objects would be written as, as Apply's
	// Options.Write: server-side dry runs are sent with its field manager,
	// validation and ForceConflicts.
	Write WriteOptions
	// ServerDryRun sends each write that would change something as a
	// server dry run (dryRun=All); its answer is the item's DryRunResult.
	// Without it, the plan is computed locally and nothing but reads is
	// sent.
	ServerDryRun bool
	// LocalServerSide, with Write.ServerSide and without ServerDryRun,
	// computes each apply item's result (Merged) locally, as the server
	// would: structured-merge-diff on the live managedFields, with no
	// request but reads; see LocalServerSideNote for what it cannot know.
	LocalServerSide bool
	// Prune, when set, adds a Prune item per object Apply with the same
	// Options.Prune would delete.
	Prune *prune.Options
	// NoManagedFields and ChunkSize are Options' fields of the same names.
	NoManagedFields bool
	ChunkSize       int64
	// OnItem, when set, is given each object's item as soon as it is
	// planned, with its place in the input (-1 for a prune item) and the
	// live object it was planned against (nil: absent), from concurrent
	// goroutines; the live object is not kept by the plan.
	OnItem func(index int, it plan.Item, live *unstructured.Unstructured)
	// StreamOnly keeps no item in the returned Plan: OnItem had them all.
	// Such a plan is only shown (diff), never executed: it creates no
	// Secret digest key (cluster.RunKey), writing nothing.
	StreamOnly bool
	// Saved keeps each item as a saved plan holds it (plan.Saved: no
	// merged object but a create's or a Secret's, no kept fields) from the
	// moment it is planned, rather than the whole items until the plan is
	// encoded: kapply plan -o of 10,000 objects held 500 MiB. OnItem still
	// gets the whole item. Not with FileFromLive's ignore rules, whose
	// filter reads the merged objects after Plan.
	Saved bool
	// FileFromLive is Options.FileFromLive: kapply plan with ignore rules
	// plans each existing object from the file apply --respect-ignore
	// would write.
	FileFromLive func(file, live *unstructured.Unstructured) (*unstructured.Unstructured, error)
}

// settings are the run's: a client dry run, so that whatever step of the
// run would write (a prune, an ApplySet parent) sends nothing; the server
// dry runs of the writes are dryRunItem's, sent explicitly.
func (o PlanOptions) settings() settings {
	return settings{WriteOptions: o.Write, Options: Options{DryRun: cluster.ClientDryRun, Prune: o.Prune,
		NoManagedFields: o.NoManagedFields, ChunkSize: o.ChunkSize, FileFromLive: o.FileFromLive},
		localServerSide: o.LocalServerSide && !o.ServerDryRun}
}

// planSettings are the settings a plan made with opts carries.
func (o PlanOptions) planSettings(namespace string) plan.Settings {
	s := plan.Settings{FieldManager: o.Write.FieldManager, ServerSide: o.Write.ServerSide, ForceConflicts: o.Write.ForceConflicts,
		FieldValidation: o.Write.FieldValidation, Namespace: namespace, PlainSecretRecord: o.Write.SecretRecord == lastapplied.PlainSecrets}
	if o.Prune != nil {
		s.ApplySet = o.Prune.ApplySet
	}
	return s
}

// PlanError lists the objects (and files) that could not be planned; the
// plan holds the others. An object's failure is a *PlanFailure, in input
// order; the failures of files that could not be loaded and of pruning
// follow, as plain errors.
type PlanError struct {
	Errs []error
}

// PlanFailure is the failure of the object at Index in the input to be
// planned. Event is the failed event, as Apply would give it: its object,
// the live object when it was read and the warnings before the failure,
// Secret values masked in its error and warnings.
type PlanFailure struct {
	Index int
	Event Event
}

func (e *PlanFailure) Error() string { return e.Event.Err.Error() }

func (e *PlanFailure) Unwrap() error { return e.Event.Err }

func (e *PlanError) Error() string { return errors.Join(e.Errs...).Error() }

func (e *PlanError) Unwrap() []error { return e.Errs }

// Plan computes what Apply would do with in, writing nothing: the same
// phases, mappings, LISTs and three-way merges, each object an item (a
// create, a patch, unchanged, or a server-side apply), then the prune
// items when asked. Items come in the order Execute writes them:
// Namespaces, CRDs, the other objects (each in input order), prune items.
// Custom resources of a CRD the run would create are planned against the
// file's CRD schema. Objects that could not be planned, and files that
// could not be loaded, are in the *PlanError returned with the plan (and
// stop pruning, as in Apply); any other error stops the run.
func (a *Applier) Plan(ctx context.Context, in Input, opts PlanOptions) (*plan.Plan, error) {
	if len(in.Objects) == 0 && len(in.Errors) == 0 {
		return nil, ErrNoObjects
	}
	objects, r, err := a.start(ctx, in, opts.settings())
	if err != nil {
		return nil, err
	}
	p := &plan.Plan{Cluster: r.cluster(ctx), Settings: opts.planSettings(r.opts.Namespace)}
	if err := r.order(ctx, objects); err != nil {
		return nil, r.maskError(err)
	}
	set, err := r.startApplySet(ctx, objects)
	if err != nil {
		return nil, r.maskError(err)
	}
	r.keys.forPlans = true
	sink := &planSink{saved: opts.Saved && opts.FileFromLive == nil}
	if !opts.StreamOnly {
		sink.items = make([]*plan.Item, len(objects))
	}
	r.step = func(ctx context.Context, o *object, live *unstructured.Unstructured) Event {
		it, ev, err := r.planObject(o, live)
		if err == nil && opts.ServerDryRun {
			err = r.dryRunItem(ctx, o, &it, &ev)
		}
		if err != nil {
			ev.Outcome, ev.Err, ev.Result = Failed, err, nil
			return ev
		}
		sink.put(o, it)
		return ev
	}
	r.keys.readOnly = opts.StreamOnly
	// The items hold what the plan needs of each object: the run keeps of
	// its events only what happened (see Options.Lean).
	r.opts.Lean = true
	r.opts.OnEvent = func(i int, ev Event) {
		if it := sink.take(i, objects[i], ev, r.ordering); it != nil && opts.OnItem != nil {
			opts.OnItem(i, *it, ev.Live)
		}
	}
	events := r.applyAll(ctx, objects, func() error { return nil })
	var failed []error
	for i, ev := range events {
		if ev.Outcome == Failed {
			failed = append(failed, &PlanFailure{Index: i, Event: r.masked(ev)})
		}
	}
	failed = append(failed, in.Errors...)
	keep := func(it plan.Item) {
		if !opts.StreamOnly {
			p.Items = append(p.Items, it)
		}
	}
	for _, ph := range phases(objects, r.ordering) {
		for _, i := range ph.indexes {
			if sink.items != nil && sink.items[i] != nil {
				keep(*sink.items[i])
			}
		}
	}
	if r.ordering.several() {
		p.Gates = plannedGates(r.ordering.gates, p.Items)
	}
	if opts.Prune != nil {
		for _, ev := range r.prune(ctx, set, objects, events, in.Errors) {
			switch ev.Outcome {
			case Pruned:
				it := plan.NewRemoval(plan.Prune, ev.Object, ev.Source)
				it.Wave, it.WaveReason = ev.Wave, ev.WaveReason
				if opts.OnItem != nil {
					opts.OnItem(-1, it, ev.Object)
				}
				keep(it)
			case Failed:
				failed = append(failed, ev.Err)
			default:
				// Left alone on purpose (a Namespace): no item, a word why.
				p.Warnings = append(p.Warnings, ev.Warnings...)
			}
		}
	}
	if len(failed) > 0 {
		return p, &PlanError{Errs: failed}
	}
	return p, nil
}

// planSink collects the items of Plan's run by input index (none when
// the plan is only streamed).
type planSink struct {
	mu sync.Mutex
	// byObject holds the item planObject made of an object until its final
	// event takes it (the server's warnings come last).
	byObject map[*object]plan.Item
	items    []*plan.Item
	// saved: items are kept as a saved plan holds them (PlanOptions.Saved).
	saved bool
}

func (s *planSink) put(o *object, it plan.Item) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byObject == nil {
		s.byObject = map[*object]plan.Item{}
	}
	s.byObject[o] = it
}

// take files the item of object i with the warnings of its final event
// (all of them: the record's, the engine's and the server's) and its
// wave, or nothing when it failed.
func (s *planSink) take(i int, o *object, ev Event, ord ordering) *plan.Item {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.byObject[o]
	delete(s.byObject, o)
	if !ok || ev.Outcome == Failed {
		return nil
	}
	it.Warnings = ev.Warnings
	it.Wave, it.WaveReason = ord.waveOf(i)
	if s.items != nil {
		kept := it
		if s.saved {
			kept = plan.Saved(it)
		}
		s.items[i] = &kept
	}
	return &it
}

// namespacesResource holds kube-system, whose UID tells one cluster from
// another.
var namespacesResource = k8sschema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// cluster names the cluster the run talks to: its server URL and the UID
// of the kube-system Namespace, when it can be read (empty otherwise: a
// plan then matches on the server alone).
func (r *runner) cluster(ctx context.Context) plan.Cluster {
	c := plan.Cluster{Server: r.host}
	var ns *unstructured.Unstructured
	err := r.retryTransient(ctx, func() error {
		var err error
		ns, err = r.dynamic.Resource(namespacesResource).Get(ctx, "kube-system", metav1.GetOptions{})
		return err
	})
	if err == nil {
		c.ID = string(ns.GetUID())
	}
	return c
}
