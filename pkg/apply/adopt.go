package apply

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/load"
	"github.com/kapply/kapply/pkg/merge"
	"github.com/kapply/kapply/pkg/ownership"
	"github.com/kapply/kapply/pkg/schema"
)

// Adoption is the plan of `kapply adopt` for one object: the patch that
// records its file as last-applied, and what the next apply then changes.
type Adoption struct {
	RecordPatch
	// Changes are what kapply apply of the file changes once the record is
	// in place, without the fields it keeps.
	Changes []merge.Change
	// Skip says why the object is left alone (it has a record already,
	// ownership.ErrHasRecord); nil when it is adopted.
	Skip error
}

// PlanAdoptions plans the adoption of every target before any is written,
// so bad input changes nothing.
func PlanAdoptions(ctx context.Context, targets []*load.Object, resolver *schema.Resolver) ([]Adoption, error) {
	out := make([]Adoption, 0, len(targets))
	for _, t := range targets {
		a, err := planAdoption(ctx, t, resolver)
		if err != nil {
			return nil, load.ErrorOf(t, err)
		}
		out = append(out, a)
	}
	return out, nil
}

func planAdoption(ctx context.Context, t *load.Object, resolver *schema.Resolver) (Adoption, error) {
	live, err := getLive(ctx, t)
	if errors.Is(err, ErrNotFound) {
		return Adoption{}, fmt.Errorf("%w: adopt records a file on an existing object; kapply apply creates it", err)
	}
	if err != nil {
		return Adoption{}, err
	}
	patch, err := ownership.Adopt(t.Obj, live)
	if errors.Is(err, ownership.ErrHasRecord) {
		return Adoption{RecordPatch: RecordPatch{Target: t}, Skip: err}, nil
	}
	if err != nil {
		return Adoption{}, err
	}
	changes, err := nextApply(t.Obj, live, resolver)
	return Adoption{RecordPatch: RecordPatch{Target: t, Live: live, Patch: patch}, Changes: changes}, err
}

// nextApply is what kapply apply of file would change once live carries
// file's record: the engine's plan, without the fields it keeps.
func nextApply(file, live *unstructured.Unstructured, resolver *schema.Resolver) ([]merge.Change, error) {
	withRecord, _, err := lastapplied.Attach(file)
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
		return nil, fmt.Errorf("planning the next apply: %w", err)
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
