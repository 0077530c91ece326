package apply

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/merge"
	"github.com/kapply/kapply/pkg/ownership"
	"github.com/kapply/kapply/pkg/schema"
)

// Adoption is one object's `kapply adopt`: its file recorded as
// last-applied, and what the next apply then changes.
type Adoption struct {
	RecordResult
	// Changes are what kapply apply of the file changes once the record is
	// in place, without the fields it keeps.
	Changes []merge.Change
	// Skip says why the object is left alone (it has a record already,
	// ownership.ErrHasRecord); nil when it is adopted.
	Skip error
}

// Adopt records each object as the last-applied configuration of its live
// object, which has none (objects made by kubectl create), exactly as
// apply would, and changes nothing else: the patch carries the record and
// the live resourceVersion, so a concurrent write makes it fail. Objects
// with a record are skipped. Every adoption is planned before any is
// written: an object that cannot be (not on the server) is the error, and
// nothing is written. A write the server refuses is its result's Err.
func (a *Applier) Adopt(ctx context.Context, in Input, opts AdoptOptions) ([]Adoption, error) {
	return planThenWrite(ctx, a, in, opts.Namespace, opts.RecordWrite, (*runner).planAdoption,
		func(a *Adoption) *RecordResult { return &a.RecordResult })
}

func (r *runner) planAdoption(ctx context.Context, t *object) (Adoption, error) {
	live, err := r.getLive(ctx, t)
	if errors.Is(err, ErrNotFound) {
		return Adoption{}, fmt.Errorf("%w: adopt records a file on an existing object; kapply apply creates it", err)
	}
	if err != nil {
		return Adoption{}, err
	}
	if err := r.keyObject(ctx, t); err != nil {
		return Adoption{}, err
	}
	patch, err := ownership.Adopt(t.Obj, live, t.key)
	if errors.Is(err, ownership.ErrHasRecord) {
		return Adoption{Skip: err}, nil
	}
	if err != nil {
		return Adoption{}, err
	}
	changes, err := nextApply(t, live, r.schemas)
	return Adoption{RecordResult: RecordResult{Live: live, patch: patch}, Changes: changes}, err
}

// nextApply is what kapply apply of file would change once live carries
// file's record: the engine's plan, without the fields it keeps.
func nextApply(o *object, live *unstructured.Unstructured, resolver *schema.Resolver) ([]merge.Change, error) {
	file := o.Obj
	withRecord, _, err := lastapplied.AttachWith(file, lastapplied.Recording{Key: o.key})
	if err != nil {
		return nil, err
	}
	record, err := lastapplied.Read(withRecord)
	if err != nil {
		return nil, err
	}
	adopted := live.DeepCopy()
	adopted.SetAnnotations(mergeAnnotations(live.GetAnnotations(), withRecord.GetAnnotations()))
	kind, err := resolver.Kind(file.GroupVersionKind())
	if err != nil {
		return nil, fmt.Errorf("reading the schema: %w", err)
	}
	plan, err := merge.ThreeWay(record, withRecord.Object, adopted.Object, kind)
	if err != nil {
		return nil, fmt.Errorf("computing the next apply: %w", err)
	}
	return managedChanges(plan.Changes), nil
}

// managedChanges drops the changes that only keep fields the file does not
// manage.
func managedChanges(all []merge.Change) []merge.Change {
	var changes []merge.Change
	for _, c := range all {
		if c.Reason != merge.KeptUnmanaged {
			changes = append(changes, c)
		}
	}
	return changes
}

// mergeAnnotations adds the record annotations of file to live's.
func mergeAnnotations(live, file map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range live {
		out[k] = v
	}
	for _, k := range []string{lastapplied.Annotation, lastapplied.CompactAnnotation} {
		if v, ok := file[k]; ok {
			out[k] = v
		}
	}
	return out
}
