package apply

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/plan"
)

// objectKey identifies an object across versions: group, kind, namespace, name.
type objectKey struct {
	gk              schema.GroupKind
	namespace, name string
}

func keyOfObject(u *unstructured.Unstructured) objectKey {
	return objectKey{gk: u.GroupVersionKind().GroupKind(), namespace: u.GetNamespace(), name: u.GetName()}
}

// declared are the objects a run applied, which pruning keeps. They are
// told by UID, as kubectl tells them: one object served under two groups
// (an Event as v1 and as events.k8s.io/v1) is listed under both, and only
// its UID says it is the one just applied. The file's group, kind and name
// also count, so that an object recreated by someone else since it was
// applied is not deleted either.
type declared struct {
	uids sets.Set[types.UID]
	keys sets.Set[objectKey]
}

// declaredBy collects the UIDs of the objects the run applied (the object
// the server returned, and the live one it replaced) and the files' keys.
func declaredBy(objects []*object, applied []Event) declared {
	d := declared{uids: sets.New[types.UID](), keys: sets.New[objectKey]()}
	for _, o := range objects {
		d.keys.Insert(keyOfObject(o.Obj))
	}
	for _, ev := range applied {
		for _, u := range []*unstructured.Unstructured{ev.Result, ev.Live} {
			if u != nil && u.GetUID() != "" {
				d.uids.Insert(u.GetUID())
			}
		}
	}
	return d
}

func (d declared) has(live *unstructured.Unstructured) bool {
	return d.uids.Has(live.GetUID()) || d.keys.Has(keyOfObject(live))
}

// lacks tells a live object the run did not apply: a candidate to prune.
func (d declared) lacks(live *unstructured.Unstructured) bool { return !d.has(live) }

// neverPrunedImplicitly are the kinds whose deletion takes everything in them
// or data with them; kubectl's old prune deleted them on a label match.
var neverPrunedImplicitly = sets.New(namespaceGK, schema.GroupKind{Kind: "PersistentVolume"})

// candidate is a live object pruning would delete.
type candidate struct {
	mapping *meta.RESTMapping
	live    *unstructured.Unstructured
}

// prunable says why pruning may not run at all: files that could not be
// loaded (their objects would look dropped), objects that failed to apply,
// or no files at all.
func (r *runner) prunable(objects []*object, applied []Event, loadErrs []error) error {
	unmapped := 0
	for _, o := range objects {
		if o.Mapping == nil {
			unmapped++
		}
	}
	switch {
	case len(loadErrs) > 0:
		return fmt.Errorf("not pruning: %d file(s) or object(s) could not be loaded, and what they declare would be deleted", len(loadErrs))
	case unmapped > 0:
		// Their identity (namespace, even kind) is unsettled: the live
		// object could look undeclared and be deleted.
		return fmt.Errorf("not pruning: %d object(s) could not be mapped to a resource, and their live copies could look undeclared", unmapped)
	case failedObjects(applied) > 0:
		// As kubectl: a failed object may be the successor of one the files
		// dropped (a rename); pruning now would leave neither. An ApplySet
		// parent keeps the superset written before applying.
		return fmt.Errorf("not pruning: %d object(s) failed to apply; nothing is deleted until a run applies every object", failedObjects(applied))
	case len(objects) == 0 && !r.opts.Prune.AllowEmpty:
		return fmt.Errorf("not pruning: no objects were loaded, which would delete every member; set PruneOptions.AllowEmpty to mean it")
	}
	return nil
}

// pruneApplySet deletes the set's members that the files no longer declare,
// then records the set as this run left it. If a deletion fails, the parent
// keeps the superset, so the next run tries again.
func (r *runner) pruneApplySet(ctx context.Context, s *applySet, keep declared) []Event {
	var found []candidate
	var events []Event
	selector := metav1.FormatLabelSelector(&metav1.LabelSelector{MatchLabels: map[string]string{applySetPartOfLabel: s.ID()}})
	for gk := range s.currentKinds.Union(s.updatedKinds) {
		mapping, err := r.mapper.RESTMapping(gk)
		if err != nil {
			events = append(events, pruneFailed(fmt.Errorf("pruning %s: %w", gk, err)))
			continue
		}
		more, err := r.listCandidates(ctx, mapping, s.currentNamespaces.Union(s.updatedNamespaces), selector, keep.lacks)
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
func (r *runner) listCandidates(ctx context.Context, mapping *meta.RESTMapping, namespaces sets.Set[string], selector string, wanted func(*unstructured.Unstructured) bool) ([]candidate, error) {
	scopes := sets.List(namespaces)
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		scopes = []string{""}
	}
	var found []candidate
	for _, ns := range scopes {
		key := listKey{resource: mapping.Resource, namespace: ns}
		err := r.eachListed(ctx, key, metav1.ListOptions{LabelSelector: selector}, func(live *unstructured.Unstructured) error {
			if wanted(live) {
				found = append(found, candidate{mapping: mapping, live: live})
			}
			return nil
		})
		if err != nil {
			return found, fmt.Errorf("listing %s in %q to prune: %w", mapping.Resource.Resource, ns, err)
		}
	}
	return found, nil
}

// deleteUndeclared deletes the candidates the run did not apply. Namespaces
// and PersistentVolumes are only deleted when explicitly allowed.
func (r *runner) deleteUndeclared(ctx context.Context, found []candidate, keep declared, allowProtected bool) []Event {
	var events []Event
	for _, c := range found {
		if keep.has(c.live) {
			continue
		}
		o := &object{Source: plan.Source{File: "(pruned)"}, Obj: c.live, Mapping: c.mapping}
		if neverPrunedImplicitly.Has(c.mapping.GroupVersionKind.GroupKind()) && !allowProtected {
			events = append(events, o.event(Event{Outcome: Skipped, Warnings: []string{
				fmt.Sprintf("%s: not pruned: Namespaces and PersistentVolumes are never pruned implicitly; delete it with `kapply delete`", o.Ref())}}))
			continue
		}
		events = append(events, r.deleteOne(ctx, o, Pruned))
	}
	return events
}

// pruneBySelector is kubectl's older prune (--prune -l SELECTOR): objects
// matching the selector, of the allowlisted kinds, in the namespaces the run
// applied to, that carry a last-applied record — kubectl's, or the compact
// one kapply writes in its place past the annotation limit — and that the
// files no longer declare.
func (r *runner) pruneBySelector(ctx context.Context, objects []*object, keep declared) []Event {
	mappings, allowed, err := r.pruneAllowlist()
	if err != nil {
		return []Event{pruneFailed(err)}
	}
	namespaces := sets.New[string]()
	for _, o := range objects {
		if o.Mapping != nil && namespaced(o) {
			namespaces.Insert(o.Obj.GetNamespace())
		}
	}
	var found []candidate
	var events []Event
	for _, mapping := range mappings {
		more, err := r.listCandidates(ctx, mapping, namespaces, r.opts.Prune.Selector, func(live *unstructured.Unstructured) bool {
			return keep.lacks(live) && lastapplied.HasRecord(live)
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

// defaultPruneAllowlist is kubectl's list of kinds its old prune considers,
// less Namespace and PersistentVolume, which kapply prunes only when the
// allowlist names them.
var defaultPruneAllowlist = []schema.GroupVersionKind{
	{Version: "v1", Kind: "ConfigMap"}, {Version: "v1", Kind: "Endpoints"},
	{Version: "v1", Kind: "PersistentVolumeClaim"}, {Version: "v1", Kind: "Pod"},
	{Version: "v1", Kind: "ReplicationController"}, {Version: "v1", Kind: "Secret"},
	{Version: "v1", Kind: "Service"}, {Group: "batch", Version: "v1", Kind: "Job"},
	{Group: "batch", Version: "v1", Kind: "CronJob"}, {Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"},
	{Group: "apps", Version: "v1", Kind: "DaemonSet"}, {Group: "apps", Version: "v1", Kind: "Deployment"},
	{Group: "apps", Version: "v1", Kind: "ReplicaSet"}, {Group: "apps", Version: "v1", Kind: "StatefulSet"},
}

// pruneAllowlist maps --prune-allowlist (group/version/kind, "core" for the
// core group), or kubectl's default list. explicit reports a user list.
func (r *runner) pruneAllowlist() (mappings []*meta.RESTMapping, explicit bool, err error) {
	gvks := defaultPruneAllowlist
	if len(r.opts.Prune.Allowlist) > 0 {
		gvks, explicit = nil, true
		for _, entry := range r.opts.Prune.Allowlist {
			parts := splitGVK(entry)
			if parts == nil {
				return nil, false, fmt.Errorf("PruneOptions.Allowlist %q: want group/version/kind, e.g. core/v1/ConfigMap or apps/v1/Deployment", entry)
			}
			gvks = append(gvks, *parts)
		}
	}
	for _, gvk := range gvks {
		mapping, err := r.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return nil, false, fmt.Errorf("prune allowlist entry %s: %w", gvk, err)
		}
		mappings = append(mappings, mapping)
	}
	return mappings, explicit, nil
}

func splitGVK(s string) *schema.GroupVersionKind {
	parts := strings.Split(s, "/")
	if len(parts) != 3 || parts[1] == "" || parts[2] == "" {
		return nil
	}
	if parts[0] == "core" {
		parts[0] = ""
	}
	return &schema.GroupVersionKind{Group: parts[0], Version: parts[1], Kind: parts[2]}
}
