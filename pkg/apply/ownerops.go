package apply

import (
	"cmp"
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/ownership"
	"github.com/kapply/kapply/pkg/plan"
)

// The ownership operations (Adopt, Release, SetLastApplied,
// EditLastApplied, Status) read and write one object at a time through the
// Applier's clients, as a run does: each object mapped by the Applier's
// mapper (objects built in code are fine), each request under the run's
// retry rule, the server's warnings gathered per object, schemas from the
// run's own answers. A namespaced object that names no namespace is given
// Namespace ("default" when empty). They take Input as a run does, but act
// on every object or on none: an Input with Errors is their error.

// AdoptOptions configure Adopt.
type AdoptOptions struct {
	Namespace string
	RecordWrite
}

// ReleaseOptions configure Release.
type ReleaseOptions struct {
	Namespace string
	// Fields are the fields to release; every one must be in each record.
	Fields []fieldpath.Path
	RecordWrite
}

// SetLastAppliedOptions configure SetLastApplied.
type SetLastAppliedOptions struct {
	Namespace string
	// CreateMissing records objects that have no record yet (kubectl's
	// --create-annotation); without it they are an error.
	CreateMissing bool
	RecordWrite
}

// EditLastAppliedOptions configure EditLastApplied.
type EditLastAppliedOptions struct {
	Namespace string
	// FieldManager is recorded in managedFields for the write; empty means
	// ClientSideFieldManager.
	FieldManager string
}

// StatusOptions configure Status.
type StatusOptions struct {
	Namespace string
	// FieldManager is the manager apply writes as: its fields are not
	// foreign; empty means ClientSideFieldManager.
	FieldManager string
	// FilterDrift, when set, is given each object's drift with its live
	// and file objects, to drop fields from it (ignore rules).
	FilterDrift func(live, file *unstructured.Unstructured, d *ownership.Drift)
}

// SetLastApplied records each object as its live object's last-applied
// configuration and changes nothing else, as kubectl apply
// set-last-applied. Every patch is planned before any is sent: an object
// that cannot be planned is the error, and nothing is written. A write the
// server refuses is its result's Err; the others are still written.
func (a *Applier) SetLastApplied(ctx context.Context, in Input, opts SetLastAppliedOptions) ([]RecordResult, error) {
	return planThenWrite(ctx, a, in, opts.Namespace, opts.RecordWrite,
		func(r *runner, ctx context.Context, o *object) (RecordResult, error) {
			return r.planSet(ctx, o, opts.CreateMissing)
		},
		func(res *RecordResult) *RecordResult { return res })
}

// EditLastApplied hands the YAML of obj's live record (lastapplied.View)
// to edit and records what edit returns, as kubectl apply
// edit-last-applied (the CLI's edit opens an editor); src, which may be
// zero, is where obj came from. Any failure, edit's included, is the
// result's Err.
func (a *Applier) EditLastApplied(ctx context.Context, obj *unstructured.Unstructured, src plan.Source, edit func(record []byte) ([]byte, error), opts EditLastAppliedOptions) RecordResult {
	o := &object{Obj: obj, Source: src}
	if err := checkObject("the object", obj); err != nil {
		return RecordResult{Object: obj, Source: src, Err: err}
	}
	r, err := a.ownershipRunner(ctx, opts.Namespace, RecordWrite{FieldManager: opts.FieldManager})
	if err != nil {
		return RecordResult{Object: o.Obj, Source: o.Source, Err: errorOf(o, err)}
	}
	ctx, sink := withWarningSink(ctx)
	res, err := r.planEditOf(ctx, o, edit)
	if err != nil {
		res = RecordResult{Object: o.Obj, Source: o.Source, Err: errorOf(o, err)}
	} else {
		r.sendRecord(ctx, o, &res)
	}
	res.Warnings = sink.texts()
	r.know(obj)
	r.maskedResult(&res)
	return res
}

func (r *runner) planEditOf(ctx context.Context, o *object, edit func([]byte) ([]byte, error)) (RecordResult, error) {
	if err := r.prepare(ctx, o); err != nil {
		return RecordResult{}, err
	}
	live, err := r.getLive(ctx, o)
	if err != nil {
		return RecordResult{}, err
	}
	// An error about the edited record may quote it.
	r.know(live)
	if err := r.keyObject(ctx, o); err != nil {
		return RecordResult{}, err
	}
	before, err := lastapplied.View(live, "yaml", o.key)
	if err != nil {
		return RecordResult{}, err
	}
	after, err := edit(before)
	if err != nil {
		return RecordResult{}, err
	}
	return planEdit(o, live, before, after)
}

// ownershipRunner starts a run for one ownership operation and reaches the
// server first, as a run does: with a discovery cache on disk (kubectl's,
// six hours) the first request may otherwise be an object's read, whose
// refused connection is retried for the whole window instead of failing at
// once with UnreachableError.
func (a *Applier) ownershipRunner(ctx context.Context, namespace string, w RecordWrite) (*runner, error) {
	r, err := a.runner(ctx, settings{WriteOptions: WriteOptions{Namespace: cmp.Or(namespace, metav1.NamespaceDefault),
		FieldManager: w.FieldManager}, Options: Options{DryRun: w.DryRun}})
	if err != nil {
		return nil, err
	}
	if err := r.reachServer(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// planThenWrite maps and plans every object before it writes any, so that
// bad input changes nothing, then sends each planned patch; a refused
// write does not stop the others. result points at a plan's RecordResult.
func planThenWrite[T any](ctx context.Context, a *Applier, in Input, namespace string, w RecordWrite,
	planOne func(*runner, context.Context, *object) (T, error), result func(*T) *RecordResult) ([]T, error) {
	objects, err := in.readAll()
	if err != nil {
		return nil, err
	}
	r, err := a.ownershipRunner(ctx, namespace, w)
	if err != nil {
		return nil, err
	}
	r.know(in.Objects...)
	plans := make([]T, len(objects))
	sinks := make([]warningSink, len(objects))
	for i, o := range objects {
		var objCtx context.Context
		objCtx, sinks[i] = withWarningSink(ctx)
		if err := r.prepare(objCtx, o); err != nil {
			return nil, r.maskError(errorOf(o, err))
		}
		if plans[i], err = planOne(r, objCtx, o); err != nil {
			return nil, r.maskError(errorOf(o, err))
		}
		res := result(&plans[i])
		res.Object, res.Source = o.Obj, o.Source
	}
	for i := range plans {
		res := result(&plans[i])
		r.sendRecord(sinks[i].In(ctx), objects[i], res)
		res.Warnings = sinks[i].texts()
		r.maskedResult(res)
	}
	return plans, nil
}
