package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapply/kapply/pkg/apply/prune"
	"github.com/kapply/kapply/pkg/cluster"
	"github.com/kapply/kapply/pkg/history"
)

// historyFieldManager writes the revisions.
const historyFieldManager = "kapply-history"

// historyRun records one run's revision: begun once the parent is
// written (it needs the parent's UID), before the other members; completed
// when the parent records the set as the run left it, which happens only
// if every member and prune succeeded.
type historyRun struct {
	opts    history.Options
	set     *prune.Set
	members []map[string]any
	// store is where the revisions are; refused, why they cannot be
	// recorded (the run then writes nothing, not even the parent).
	store   *historyStore
	refused error
	// head is the name of the revision's first chunk once begun; empty
	// when the run records nothing.
	head string
}

// newHistoryRun locates the set's revisions for a run.
func (r *runner) newHistoryRun(opts history.Options, set *prune.Set, objs []*unstructured.Unstructured) *historyRun {
	h := &historyRun{opts: opts, set: set, members: history.NewMembers(objs)}
	h.store, h.refused = r.storeOf(set, opts.Namespace)
	return h
}

// refusal is why the run may not begin: checked before the parent is
// written.
func (h *historyRun) refusal() error {
	if h == nil {
		return nil
	}
	return h.refused
}

// newHistory prepares the revision of a run that applies objects as set's
// members: their configurations, copied now (the run changes the
// objects as it goes), namespaced as the run will send them. Nil without a
// set, history options or with a dry run.
func (r *runner) newHistory(set *prune.Set, objects []*object) *historyRun {
	if set == nil || r.opts.Prune.History == nil || r.opts.DryRun != cluster.NoDryRun {
		return nil
	}
	objs := make([]*unstructured.Unstructured, len(objects))
	scopes := map[schema.GroupVersionKind]bool{}
	for i, o := range objects {
		objs[i] = r.configurationOf(o.Obj, scopes)
	}
	return r.newHistoryRun(*r.opts.Prune.History, set, objs)
}

// planHistory prepares the revision of an executed plan that names set:
// the configurations are the files' objects the plan is checked against,
// labelled as the set's members, as Plan labelled them.
func (r *runner) planHistory(set *prune.Set, opts ExecuteOptions) *historyRun {
	if set == nil || opts.History == nil {
		return nil
	}
	objs := make([]*unstructured.Unstructured, len(opts.Objects.Objects))
	scopes := map[schema.GroupVersionKind]bool{}
	for i, o := range opts.Objects.Objects {
		objs[i] = r.configurationOf(o, scopes).DeepCopy() // labelled below: never the caller's
		labels := objs[i].GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[prune.PartOfLabel] = set.ID()
		objs[i].SetLabels(labels)
	}
	return r.newHistoryRun(*opts.History, set, objs)
}

// configurationOf is obj with the run's namespace when its kind is
// namespaced and it names none (a copy; obj itself otherwise: NewMembers
// copies what it keeps); a kind not mapped yet (a CRD of the run) stays as
// the file has it. scopes holds the answers already had, failures too: the
// mapper is asked once a kind.
func (r *runner) configurationOf(obj *unstructured.Unstructured, scopes map[schema.GroupVersionKind]bool) *unstructured.Unstructured {
	if obj.GetNamespace() != "" {
		return obj
	}
	gvk := obj.GroupVersionKind()
	namespaced, known := scopes[gvk]
	if !known {
		var m *meta.RESTMapping
		if cached, ok := r.mappings.Load(gvk); ok {
			m = cached.(*meta.RESTMapping)
		} else if mapped, err := r.mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
			m = mapped
		}
		namespaced = m != nil && m.Scope.Name() == meta.RESTScopeNameNamespace
		scopes[gvk] = namespaced
	}
	if !namespaced {
		return obj
	}
	c := obj.DeepCopy()
	c.SetNamespace(r.opts.Namespace)
	return c
}

// beginRevision writes the run's revision as incomplete, unless the set's
// last revision holds the same configurations: a complete one means the
// run changes nothing worth a revision, an incomplete one is completed by
// this run. It then deletes the revisions past the limit. A run that
// writes the same number at once as another takes the next one.
func (r *runner) beginRevision(ctx context.Context, h *historyRun, parent *unstructured.Unstructured) error {
	if h.refused != nil {
		return h.refused
	}
	for attempt := 1; ; attempt++ {
		err := r.tryBeginRevision(ctx, h, parent)
		if !errors.Is(err, errRevisionTaken) || attempt == 3 {
			return err
		}
	}
}

// errRevisionTaken: another run wrote the revision's first chunk first.
var errRevisionTaken = errors.New("revision number taken by another run")

func (r *runner) tryBeginRevision(ctx context.Context, h *historyRun, parent *unstructured.Unstructured) error {
	objs, err := r.listHistory(ctx, h.store)
	if err != nil {
		return err
	}
	revs, err := history.Revisions(objs)
	if err != nil {
		return err
	}
	if h.opts.Limit <= 0 {
		r.warnHistory(h, fmt.Sprintf("--history-limit=0: no revision of ApplySet %s is kept (%d deleted)", h.set, len(revs)))
		return r.expireRevisions(ctx, h, revs, objs, 0)
	}
	var before []map[string]any
	if n := len(revs); n > 0 {
		last := revs[n-1]
		// Only the last revision is read whole: the one compared with.
		if before, err = history.Members(objs, last.Number); err != nil {
			return fmt.Errorf("history of ApplySet %s: %w", h.set, err)
		}
		if history.Same(before, h.members) {
			if !last.Complete {
				h.head = history.ChunkName(parent.GetName(), last.Number, 0)
			}
			return nil
		}
	}
	manager := r.opts.FieldManager
	if manager == "" { // an executed plan's: kubectl's for its kind of write (managerOf)
		manager = ClientSideFieldManager
		if r.opts.ServerSide {
			manager = ServerSideFieldManager
		}
	}
	rev := history.Revision{Number: history.Next(revs), Time: time.Now(), FieldManager: manager,
		User: r.whoAmI(ctx, h.opts.User), ChangeCause: h.opts.ChangeCause, Counts: history.Compare(before, h.members), Members: h.members}
	if err := r.writeRevision(ctx, h, rev, parent); err != nil {
		return err
	}
	return r.expireRevisions(ctx, h, append(revs, rev), objs, h.opts.Limit)
}

// writeRevision writes rev's chunks, the first last and created, not
// applied: a revision is listed only once all of it is there, and two runs
// never both write one number's first chunk. The others are applied: an
// interrupted run may have left them.
func (r *runner) writeRevision(ctx context.Context, h *historyRun, rev history.Revision, parent *unstructured.Unstructured) error {
	gvk := parent.GroupVersionKind()
	owner := metav1.OwnerReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: parent.GetName(), UID: parent.GetUID()}
	chunks, err := history.Encode(rev, history.Parent{SetID: h.store.setID, Kind: h.store.kind, Namespace: h.store.namespace, Owner: owner}, history.MaxChunk)
	if err != nil {
		return err
	}
	for i := len(chunks) - 1; i > 0; i-- {
		if err := r.applyHistoryObject(ctx, h.store, chunks[i]); err != nil {
			return err
		}
	}
	if err := r.createHistoryHead(ctx, h.store, chunks[0]); err != nil {
		return err
	}
	h.head = chunks[0].GetName()
	return nil
}

// createHistoryHead creates a revision's first chunk; errRevisionTaken if
// it exists. A create whose answer was lost and that finds its own object
// is done.
func (r *runner) createHistoryHead(ctx context.Context, s *historyStore, head *unstructured.Unstructured) error {
	err := r.retryTransient(ctx, func() error {
		_, err := s.client.Create(ctx, head, metav1.CreateOptions{FieldManager: historyFieldManager})
		return err
	})
	if apierrors.IsAlreadyExists(err) {
		there, getErr := s.client.Get(ctx, head.GetName(), metav1.GetOptions{})
		if getErr == nil && history.SameHead(there, head) {
			return nil
		}
		return errRevisionTaken
	}
	if err != nil {
		return fmt.Errorf("writing history %s %s/%s: %w", s.kind, s.namespace, head.GetName(), err)
	}
	return nil
}

// applyHistoryObject writes one chunk by server-side apply: a chunk left by
// an interrupted run is overwritten.
func (r *runner) applyHistoryObject(ctx context.Context, s *historyStore, obj *unstructured.Unstructured) error {
	body, err := json.Marshal(obj.Object)
	if err != nil {
		return err
	}
	force := true
	err = r.retryTransient(ctx, func() error {
		_, err := s.client.Patch(ctx, obj.GetName(), types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: historyFieldManager, Force: &force})
		return err
	})
	if err != nil {
		return fmt.Errorf("writing history %s %s/%s: %w", s.kind, s.namespace, obj.GetName(), err)
	}
	return nil
}

// completeRevision marks the run's revision complete.
func (r *runner) completeRevision(ctx context.Context, h *historyRun) error {
	if h == nil || h.head == "" {
		return nil
	}
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:"true"}}}`, history.CompleteAnnotation)
	err := r.retryTransient(ctx, func() error {
		_, err := h.store.client.Patch(ctx, h.head, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: historyFieldManager})
		return err
	})
	if err != nil {
		return fmt.Errorf("marking history %s %s/%s complete: %w", h.store.kind, h.store.namespace, h.head, err)
	}
	return nil
}

// expireRevisions deletes the chunks of the revisions past limit.
func (r *runner) expireRevisions(ctx context.Context, h *historyRun, revs []history.Revision, objs []unstructured.Unstructured, limit int) error {
	expired := map[string]bool{}
	for _, n := range history.Expired(revs, limit) {
		expired[strconv.Itoa(n)] = true
	}
	for _, o := range objs {
		if !expired[o.GetLabels()[history.RevisionLabel]] {
			continue
		}
		uid := o.GetUID()
		err := r.retryTransient(ctx, func() error {
			return h.store.client.Delete(ctx, o.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting history %s %s/%s: %w", h.store.kind, h.store.namespace, o.GetName(), err)
		}
	}
	return nil
}

func (r *runner) warnHistory(h *historyRun, msg string) {
	if h.opts.Warn != nil {
		h.opts.Warn(msg)
	}
}

var selfSubjectReviews = schema.GroupVersionResource{Group: "authentication.k8s.io", Version: "v1", Resource: "selfsubjectreviews"}

// whoAmI is the user the server authenticates the run as
// (SelfSubjectReview), else fallback: a server may not serve the API.
func (r *runner) whoAmI(ctx context.Context, fallback string) string {
	review := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}}
	answer, err := r.dynamic.Resource(selfSubjectReviews).Create(ctx, review, metav1.CreateOptions{})
	if err != nil {
		return fallback
	}
	name, found, err := unstructured.NestedString(answer.Object, "status", "userInfo", "username")
	if err != nil || !found || name == "" {
		return fallback
	}
	return name
}
