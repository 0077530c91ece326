package apply

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"

	"github.com/kapply/kapply/pkg/schema"
)

// runner holds what one run talks to the cluster with.
type runner struct {
	opts    Options
	dynamic dynamic.Interface
	mapper  meta.RESTMapper
	schemas *schema.Resolver
	// crdsApplied is set once the run has applied CRDs, whose kinds may
	// take a moment to appear in discovery.
	crdsApplied bool
}

// Run applies every object in opts.Files and returns one event per object,
// in input order, followed by one failed event per file that could not be
// loaded. The error is only for failures that stop the whole run (no
// cluster configuration); per-object failures are events.
func Run(ctx context.Context, getter genericclioptions.RESTClientGetter, opts Options) ([]Event, error) {
	r, err := newRunner(getter, opts)
	if err != nil {
		return nil, err
	}
	objects, loadErrs := Load(getter, opts.Files)
	events := r.applyAll(ctx, objects)
	for _, err := range loadErrs {
		events = append(events, Event{Outcome: Failed, Err: err})
	}
	return events, nil
}

func newRunner(getter genericclioptions.RESTClientGetter, opts Options) (*runner, error) {
	cfg, err := getter.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("loading cluster configuration: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating client: %w", err)
	}
	mapper, err := getter.ToRESTMapper()
	if err != nil {
		return nil, fmt.Errorf("creating REST mapper: %w", err)
	}
	dc, err := getter.ToDiscoveryClient()
	if err != nil {
		return nil, fmt.Errorf("creating discovery client: %w", err)
	}
	schemas, err := newResolver(dc, opts.MergeKeys)
	if err != nil {
		return nil, err
	}
	if opts.FieldManager == "" {
		opts.FieldManager = DefaultFieldManager
	}
	return &runner{opts: opts, dynamic: dyn, mapper: mapper, schemas: schemas}, nil
}

// applyAll applies the objects phase by phase (see phases) and returns their
// events in input order.
func (r *runner) applyAll(ctx context.Context, objects []*Object) []Event {
	events := make([]Event, len(objects))
	unreadableCRDs := addCRDs(r.schemas, objects)
	for _, phase := range phases(objects) {
		for _, i := range phase.indexes {
			events[i] = r.applyOne(ctx, objects[i])
		}
		if phase.crds {
			r.awaitCRDs(ctx, objects, phase.indexes, events)
		}
	}
	for i, err := range unreadableCRDs {
		events[i].Warnings = append(events[i].Warnings, fmt.Sprintf("%s: %v", objects[i].Ref(), err))
	}
	return events
}

// applyOne prepares one object (name, mapping, namespace) and applies it.
func (r *runner) applyOne(ctx context.Context, o *Object) Event {
	if err := r.prepare(ctx, o); err != nil {
		return Event{Object: o, Outcome: Failed, Err: objectError(o, err)}
	}
	ev := r.createOrUpdate(ctx, o)
	if ev.Err != nil {
		ev.Err = objectError(o, ev.Err)
	}
	return ev
}
