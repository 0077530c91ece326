package apply

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kapply/kapply/pkg/apply/prune"
	"github.com/kapply/kapply/pkg/cluster"
	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/plan"
)

// declaredBy collects the UIDs of the objects the run applied (the object
// the server returned, and the live one it replaced) and the files' keys.
func declaredBy(objects []*object, applied []Event) prune.Declared {
	d := prune.NewDeclared()
	for _, o := range objects {
		d.AddFile(o.Obj)
	}
	for _, ev := range applied {
		d.AddApplied(ev.Result)
		d.AddApplied(ev.Live)
	}
	return d
}

// prunable says why pruning may not run at all (prune.Options.Refusal).
func (r *runner) prunable(objects []*object, applied []Event, loadErrs []error) error {
	unmapped := 0
	for _, o := range objects {
		if o.Mapping == nil {
			unmapped++
		}
	}
	return r.opts.Prune.Refusal(prune.Run{LoadErrors: len(loadErrs), Unmapped: unmapped,
		Failed: failedObjects(applied), Objects: len(objects)})
}

// pruneApplySet deletes the set's members that the files no longer declare,
// then records the set as this run left it. If a deletion fails, the parent
// keeps the superset, so the next run tries again.
func (r *runner) pruneApplySet(ctx context.Context, s *prune.Set, keep prune.Declared) []Event {
	var found []prune.Candidate
	var events []Event
	for gk := range s.Kinds() {
		mapping, err := r.mapper.RESTMapping(gk)
		if _, fromRun := r.crds[gk]; err != nil && fromRun && meta.IsNoMatchError(err) {
			// A plan's kind whose CRD the run creates: the server serves
			// none yet, so there is nothing of it to prune.
			continue
		}
		if err != nil {
			events = append(events, pruneFailed(fmt.Errorf("pruning %s: %w", gk, err)))
			continue
		}
		more, err := r.listCandidates(ctx, mapping, s.Namespaces(), s.MemberSelector(), keep.Lacks)
		if err != nil {
			events = append(events, pruneFailed(err))
		}
		found = append(found, more...)
	}
	events = append(events, r.deleteUndeclared(ctx, found, keep, false)...)
	if AnyFailed(events) {
		return events
	}
	if err := r.writeParent(ctx, s, false); err != nil {
		events = append(events, pruneFailed(err))
	}
	return events
}

// listCandidates lists, page by page, the objects of one resource matching
// the selector, in each namespace for a namespaced resource, and keeps
// those wanted says pruning may delete (the others go with their page).
func (r *runner) listCandidates(ctx context.Context, mapping *meta.RESTMapping, namespaces sets.Set[string], selector string, wanted func(*unstructured.Unstructured) bool) ([]prune.Candidate, error) {
	scopes := sets.List(namespaces)
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		scopes = []string{""}
	}
	var found []prune.Candidate
	for _, ns := range scopes {
		key := listKey{resource: mapping.Resource, namespace: ns}
		err := r.eachListed(ctx, key, metav1.ListOptions{LabelSelector: selector}, func(live *unstructured.Unstructured) error {
			if wanted(live) {
				found = append(found, prune.Candidate{Mapping: mapping, Live: live})
			}
			return nil
		})
		if err != nil {
			return found, fmt.Errorf("listing %s in %q to prune: %w", mapping.Resource.Resource, ns, err)
		}
	}
	return found, nil
}

// deleteUndeclared deletes the candidates the run did not apply (see
// prune.Select); the protected ones are skipped with a warning.
func (r *runner) deleteUndeclared(ctx context.Context, found []prune.Candidate, keep prune.Declared, allowProtected bool) []Event {
	remove, protected := prune.Select(found, keep, allowProtected)
	var events []Event
	for _, c := range protected {
		o := prunedObject(c)
		events = append(events, o.event(Event{Outcome: Skipped, Warnings: []string{
			fmt.Sprintf("%s: not pruned: Namespaces and PersistentVolumes are never pruned implicitly; delete it with `kapply delete`", o.Ref())}}))
	}
	pruned := make([]*object, len(remove))
	for i, c := range remove {
		pruned[i] = prunedObject(c)
	}
	// The last wave first (their live objects' sync-waves and
	// depends-on): dependents go before what they depend on.
	waves := r.reverseWaves(ctx, pruned)
	for n, wave := range waves {
		first := len(events)
		for _, i := range wave {
			ev := r.deleteOne(ctx, pruned[i], Pruned)
			if len(waves) > 1 {
				// Its place in the removals: a plan's prune item keeps it.
				ev.Wave, ev.WaveReason = n, "pruned last wave first"
			}
			events = append(events, ev)
		}
		if r.opts.Waves.WaitPruned && n < len(waves)-1 && r.opts.DryRun == cluster.NoDryRun {
			r.awaitGone(ctx, events, allIndexes(len(events))[first:])
		}
	}
	return events
}

func prunedObject(c prune.Candidate) *object {
	return &object{Source: plan.Source{File: "(pruned)"}, Obj: c.Live, Mapping: c.Mapping}
}

// pruneBySelector is kubectl's older prune (--prune -l SELECTOR): objects
// matching the selector, of the allowlisted kinds, in the namespaces the run
// applied to, that carry a last-applied record — kubectl's, or the compact
// one kapply writes in its place past the annotation limit — and that the
// files no longer declare.
func (r *runner) pruneBySelector(ctx context.Context, objects []*object, keep prune.Declared) []Event {
	mappings, allowed, err := r.opts.Prune.AllowedKinds(r.mapper)
	if err != nil {
		return []Event{pruneFailed(err)}
	}
	namespaces := sets.New[string]()
	for _, o := range objects {
		if o.Mapping != nil && namespaced(o) {
			namespaces.Insert(o.Obj.GetNamespace())
		}
	}
	var found []prune.Candidate
	var events []Event
	for _, mapping := range mappings {
		more, err := r.listCandidates(ctx, mapping, namespaces, r.opts.Prune.Selector, func(live *unstructured.Unstructured) bool {
			return keep.Lacks(live) && lastapplied.HasRecord(live)
		})
		if err != nil {
			events = append(events, pruneFailed(err))
		}
		found = append(found, more...)
	}
	return append(events, r.deleteUndeclared(ctx, found, keep, allowed)...)
}

// PruneError is a failure of the prune step as a whole, not of one object:
// pruning refused ("not pruning: ..."), a LIST of candidates or the update
// of the ApplySet parent failed. Its event fails the run but is not
// counted as a failed object (Summarize).
type PruneError struct{ Err error }

func (e *PruneError) Error() string { return e.Err.Error() }
func (e *PruneError) Unwrap() error { return e.Err }

func pruneFailed(err error) Event {
	return Event{Outcome: Failed, Err: &PruneError{Err: err}}
}

// failedObjects counts the events of objects that failed (not of files that
// could not be loaded).
func failedObjects(events []Event) int {
	n := 0
	for _, ev := range events {
		if ev.Outcome == Failed && ev.Object != nil {
			n++
		}
	}
	return n
}
