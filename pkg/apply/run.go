package apply

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kapply/kapply/pkg/apply/prune"
	"github.com/kapply/kapply/pkg/cluster"
	"github.com/kapply/kapply/pkg/plan"
)

// runner holds what one run talks to the cluster with.
type runner struct {
	opts    settings
	dynamic dynamic.Interface
	lists   rest.Interface
	// runAnswers are the run's own mappings and schemas.
	*runAnswers
	// discovery and host serve the check that the server is reachable.
	discovery discovery.DiscoveryInterface
	host      string
	// crds are the run's CRDs by group-kind, to map their custom resources
	// in a client dry run, where the CRDs never reach the server.
	crds crdIndex
	// crdsApplied is set once the run has applied CRDs, whose kinds may
	// take a moment to appear in discovery.
	crdsApplied bool
	done        atomic.Int64
	// retries is the run's one rule for answers that say "try again".
	retries *cluster.Retries
	// listSlots bounds the run's LISTs open at once (eachListed).
	listSlots chan struct{}
	// step is what the run does with each prepared object and its live
	// version (nil: absent): Apply's applyObject (plan it, write it),
	// or Plan's (plan it, hand the item out).
	step func(ctx context.Context, o *object, live *unstructured.Unstructured) Event
	// secrets are the Secrets whose values the run's texts never print
	// (see mask.go).
	secrets *cluster.Secrets
	// keys are the digest keys of the Secrets' namespaces (digestkey.go).
	keys runKeys
	// ordering is the run's waves (waves.go); gates, when set, holds each
	// wave after the first back until its gate passes (gates.go). Only a
	// run that writes (holdWaves) has gates, not a plan or a dry run.
	ordering  ordering
	holdWaves bool
	gates     *gateRun
	history   *historyRun // the run's revision (history_record.go)
}

// Input is what a run applies: the objects, where each came from, and an
// error per file or document that could not be loaded. A run with such
// errors applies the objects it has but never prunes: what a lost file
// declared would go. The objects are the run's: it settles their
// namespaces in place.
type Input struct {
	Objects []*unstructured.Unstructured
	// Sources, when set, holds the Source of each object, in the order of
	// Objects: errors name the file an object came from. Objects built in
	// a program need none.
	Sources []plan.Source
	Errors  []error
}

// Apply applies every object of in and returns one event per object, in
// input order, followed by one failed event per load error, then the
// events of pruning. The error is only for failures that stop the whole
// run (an unreachable server, a malformed ApplySet); per-object failures
// are events.
func (a *Applier) Apply(ctx context.Context, in Input, opts Options) ([]Event, error) {
	if len(in.Objects) == 0 && len(in.Errors) == 0 && (opts.Prune == nil || !opts.Prune.AllowEmpty) {
		return nil, ErrNoObjects
	}
	objects, r, err := a.start(ctx, in, opts.settings())
	if err != nil {
		return nil, err
	}
	if err := r.order(ctx, objects); err != nil {
		return nil, r.maskError(err)
	}
	set, err := r.startApplySet(ctx, objects)
	if err != nil {
		return nil, r.maskError(err)
	}
	r.history = r.newHistory(set, objects)
	// Apply is Plan and Execute in one call, object by object: each is
	// planned as it is listed and its item written at once (applyObject).
	r.step = r.applyObject
	r.holdWaves = r.opts.DryRun == cluster.NoDryRun
	// The parent goes after the Namespaces: it may live in one of them.
	events := r.applyAll(ctx, objects, func() error { return r.recordSuperset(ctx, set) })
	var pruned []Event
	if r.opts.Prune != nil {
		pruned = r.prune(ctx, set, objects, events, in.Errors)
	}
	for _, err := range in.Errors {
		events = append(events, Event{Outcome: Failed, Err: err})
	}
	events = append(events, pruned...)
	return r.maskedAll(events), nil
}

// ErrNoObjects is kubectl's error for a run whose files hold no object (an
// empty file, only "---", nothing on stdin, or nothing the selector keeps).
var ErrNoObjects = errors.New("no objects passed to apply")

// recordSuperset writes the members of before and of this run on the
// parent, before the members are applied, so an interrupted run forgets
// nobody.
func (r *runner) recordSuperset(ctx context.Context, set *prune.Set) error {
	if set == nil {
		return nil
	}
	return r.writeParent(ctx, set, true)
}

// startApplySet reads the run's ApplySet and labels the objects as its
// members.
func (r *runner) startApplySet(ctx context.Context, objects []*object) (*prune.Set, error) {
	if r.opts.Prune == nil || r.opts.Prune.ApplySet == "" {
		return nil, nil
	}
	set, err := prune.ParseSet(r.opts.Prune.ApplySet, r.opts.Namespace, r.mapper)
	if err != nil {
		return nil, err
	}
	if err := r.fetchApplySet(ctx, set); err != nil {
		return nil, err
	}
	for _, o := range objects {
		set.Add(o.Obj, r.opts.Namespace)
	}
	return set, nil
}

// prune deletes what the run did not apply, unless the run could not read
// every file or apply every object. Its events are masked (mask.go)
// whichever operation hands them out.
func (r *runner) prune(ctx context.Context, set *prune.Set, objects []*object, applied []Event, loadErrs []error) []Event {
	if err := r.prunable(objects, applied, loadErrs); err != nil {
		return r.maskedAll([]Event{pruneFailed(err)})
	}
	keep := declaredBy(objects, applied)
	if set != nil {
		return r.maskedAll(r.pruneApplySet(ctx, set, keep))
	}
	return r.maskedAll(r.pruneBySelector(ctx, objects, keep))
}

// start begins an operation on in: its objects, and a runner with the
// operation's settings once the server answers. The error of an
// unreachable server comes after in's load errors.
func (a *Applier) start(ctx context.Context, in Input, opts settings) ([]*object, *runner, error) {
	objects, err := in.objects()
	if err != nil {
		return nil, nil, err
	}
	r, err := a.runner(ctx, opts)
	if err != nil {
		return nil, nil, err
	}
	// Its errors and warnings may quote the values of in's Secrets.
	r.know(in.Objects...)
	if err := r.reachServer(ctx); err != nil {
		return nil, nil, afterLoadErrors(in.Errors, err)
	}
	return objects, r, nil
}

// runner starts a run with the operation's settings, the Applier's
// parallelism and answers of its own (see runAnswers).
func (a *Applier) runner(ctx context.Context, opts settings) (*runner, error) {
	c := a.clients
	opts.Parallel = c.Parallel
	opts = opts.withDefaults()
	builtins, err := a.builtins()
	if err != nil {
		return nil, err
	}
	if a.ran.Swap(true) {
		meta.MaybeResetRESTMapper(c.Mapper)
	}
	r := &runner{opts: opts, dynamic: c.Dynamic, lists: cluster.RawClient(c.Lists), discovery: c.Discovery,
		host: c.Host, retries: cluster.NewRetries(c.Backoff, c.RetryWindow, c.RequestTimeout), listSlots: make(chan struct{}, cluster.MaxListsInFlight), secrets: &cluster.Secrets{}}
	r.runAnswers = newRunAnswers(ctx, c, builtins.Recognizes, r.retryTransient)
	return r, nil
}

// applyAll applies the objects phase by phase (see phases) and returns their
// events in input order. afterNamespaces runs once the Namespaces are
// applied; if it fails, nothing else is.
func (r *runner) applyAll(ctx context.Context, objects []*object, afterNamespaces func() error) []Event {
	events := make([]Event, len(objects))
	unreadableCRDs := r.indexCRDs(objects)
	if r.holdWaves {
		r.gates = r.newGateRun(r.ordering.gates)
	}
	all := phases(objects, r.ordering)
	early := r.startEarly(ctx, objects, all)
	for n, phase := range all {
		if phase.gated && r.gates != nil {
			if err := r.gates.pass(ctx, phase.wave, r.objectsByID(objects)); err != nil {
				failRest(objects, all[n:], events, err)
				for _, rest := range all[n:] {
					// Its wave says which gate held it back.
					for _, i := range rest.indexes {
						events[i].Wave, events[i].WaveReason = r.ordering.waveOf(i)
					}
					r.reportAll(rest.indexes, events)
				}
				break
			}
		}
		// A CRD's event is final once it is established.
		awaits := phase.crds && r.opts.DryRun == cluster.NoDryRun
		report := r.report
		if awaits {
			report = nil
		}
		if n == len(all)-1 && early != nil {
			r.runPhase(ctx, objects, early.take(), events, report)
			early.cancel()
		} else {
			r.applyPhase(ctx, objects, phase.indexes, events, report)
		}
		if awaits {
			r.awaitCRDs(ctx, objects, phase.indexes, events)
			r.reportAll(phase.indexes, events)
		}
		if n == 0 {
			if err := afterNamespaces(); err != nil {
				early.abandon()
				failRest(objects, all[1:], events, err)
				for _, rest := range all[1:] {
					r.reportAll(rest.indexes, events)
				}
				break
			}
		}
	}
	for i, err := range unreadableCRDs {
		events[i].Warnings = append(events[i].Warnings, fmt.Sprintf("%s: %v", objects[i].Ref(), err))
		events[i].masked = false // a warning was added
	}
	return events
}

// earlyPhase is the last phase, started (prepared, its LISTs sent) while
// the Namespaces apply.
type earlyPhase struct {
	started chan *phaseStart
	cancel  context.CancelFunc
}

// startEarly starts the last phase at once when the run has no CRDs: its
// objects can then be mapped and listed before the Namespaces are applied
// (a LIST in a Namespace the run creates finds nothing, which is right: the
// objects are created), so the server lists them while the Namespaces are
// planned. Nothing is reported or written before the phase runs. With CRDs,
// custom resources wait for their kinds, and the phase starts in its turn.
func (r *runner) startEarly(ctx context.Context, objects []*object, all []phase) *earlyPhase {
	if len(all) > 3 || len(all[1].indexes) > 0 || len(all[2].indexes) == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	e := &earlyPhase{started: make(chan *phaseStart, 1), cancel: cancel}
	go func() { e.started <- r.startPhase(ctx, objects, all[2].indexes) }()
	return e
}

// take waits for the phase to be started and returns it; its LISTs go on
// until cancel.
func (e *earlyPhase) take() *phaseStart { return <-e.started }

// abandon stops the LISTs of a phase that will not run.
func (e *earlyPhase) abandon() {
	if e == nil {
		return
	}
	e.cancel()
	<-e.started
}

// phaseStart is a phase ready to run: its objects prepared (those that
// could not be, failed), and their live versions being read.
type phaseStart struct {
	failed  []indexedEvent
	lives   *liveIndex
	order   <-chan int
	schemas *sync.WaitGroup
}

type indexedEvent struct {
	index int
	event Event
}

// applyPhase prepares the phase's objects, reads their live versions (one
// LIST per resource and namespace where that saves requests) and applies
// them concurrently, at most Parallel at a time. Each event, as soon as it
// is known, goes to report, unless that is nil.
func (r *runner) applyPhase(ctx context.Context, objects []*object, indexes []int, events []Event, report func(int, Event) Event) {
	r.runPhase(ctx, objects, r.startPhase(ctx, objects, indexes), events, report)
}

// startPhase prepares the objects and starts reading their live versions.
func (r *runner) startPhase(ctx context.Context, objects []*object, indexes []int) *phaseStart {
	p := &phaseStart{schemas: &sync.WaitGroup{}}
	fail := func(i int, ev Event) { p.failed = append(p.failed, indexedEvent{i, ev}) }
	var ready []int
	for _, i := range indexes {
		if err := r.prepare(ctx, objects[i]); err != nil {
			fail(i, objects[i].event(Event{Outcome: Failed, Err: errorOf(objects[i], err)}))
			continue
		}
		ready = append(ready, i)
	}
	ready = r.refuseDuplicates(objects, ready, fail)
	p.lives, p.order = r.startLists(ctx, objects, ready, p.schemas)
	return p
}

// runPhase reports the objects that failed to start and applies the others
// as their live versions come.
func (r *runner) runPhase(ctx context.Context, objects []*object, p *phaseStart, events []Event, report func(int, Event) Event) {
	done := func(i int, ev Event) {
		if i == 0 {
			// The order's own warnings (another tool's hooks, an
			// inferred cycle) come with the run's first object.
			ev.Warnings = append(ev.Warnings, r.ordering.warnings...)
		}
		ev.Wave, ev.WaveReason = r.ordering.waveOf(i)
		events[i] = ev
		r.progress(len(objects))
		if report != nil {
			events[i] = r.kept(report(i, ev))
		}
	}
	for _, f := range p.failed {
		done(f.index, f.event)
	}
	forEachLimit(p.order, r.opts.Parallel, func(i int) {
		done(i, r.applyOne(ctx, objects[i], p.lives))
	})
	p.schemas.Wait()
}

// report hands object i's final event to OnEvent, masked, and returns it
// as handed.
func (r *runner) report(i int, ev Event) Event {
	if r.opts.OnEvent == nil {
		return ev
	}
	ev = r.masked(ev)
	r.opts.OnEvent(i, ev)
	return ev
}

func (r *runner) reportAll(indexes []int, events []Event) {
	for _, i := range indexes {
		events[i] = r.kept(r.report(i, events[i]))
	}
}

// kept is what the run keeps of an event OnEvent has had.
func (r *runner) kept(ev Event) Event {
	if r.opts.Lean && r.opts.OnEvent != nil {
		return ev.Lean()
	}
	return ev
}

func (r *runner) progress(total int) {
	done := r.done.Add(1)
	if r.opts.Progress != nil {
		r.opts.Progress(int(done), total)
	}
}

// applyOne runs the run's step on one prepared object and its live
// version (listed, or read now); the server's warnings about its requests
// become the event's.
func (r *runner) applyOne(ctx context.Context, o *object, lives *liveIndex) Event {
	ctx, sink := withWarningSink(ctx)
	ev := r.stepWithLive(ctx, o, lives)
	ev.Warnings = append(ev.Warnings, sink.warnings(o)...)
	if ev.Err != nil {
		ev.Err = errorOf(o, ev.Err)
	}
	return ev
}

// stepWithLive finds the object's live version and runs the run's step.
func (r *runner) stepWithLive(ctx context.Context, o *object, lives *liveIndex) Event {
	live, exists, listed := lives.take(o)
	if !listed {
		var err error
		live, err = r.get(ctx, r.resource(o), o)
		if err != nil && !apierrors.IsNotFound(err) {
			return o.event(Event{Outcome: Failed, Err: fmt.Errorf("reading live object: %w", err)})
		}
		exists = err == nil
	}
	if err := r.keyObject(ctx, o); err != nil {
		return o.event(Event{Outcome: Failed, Err: err})
	}
	if err := r.fileFromLive(o, live, exists); err != nil {
		return o.event(Event{Outcome: Failed, Err: err})
	}
	if !exists {
		live = nil
	}
	return r.step(ctx, o, live)
}

// failRest marks every object of the given phases as failed with err.
func failRest(objects []*object, rest []phase, events []Event, err error) {
	for _, phase := range rest {
		for _, i := range phase.indexes {
			events[i] = objects[i].event(Event{Outcome: Failed, Err: errorOf(objects[i], fmt.Errorf("not applied: %w", err))})
		}
	}
}
