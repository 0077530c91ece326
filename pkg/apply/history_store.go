package apply

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kapply/kapply/pkg/apply/prune"
	"github.com/kapply/kapply/pkg/history"
)

// historyStore is where one ApplySet's revisions are: a kind, a namespace
// and the label selecting them.
type historyStore struct {
	kind      string
	namespace string
	setID     string
	client    dynamic.ResourceInterface
}

var (
	secretsGVR    = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	configMapsGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// storeOf locates the revisions of set: objects of the parent's kind in its
// namespace for a Secret or ConfigMap parent, else Secrets in
// historyNamespace, which a namespaced parent must live in (an
// ownerReference names an owner of the object's own namespace).
func (r *runner) storeOf(set *prune.Set, historyNamespace string) (*historyStore, error) {
	gk := set.Mapping.GroupVersionKind.GroupKind()
	s := &historyStore{setID: set.ID(), namespace: set.Namespace, kind: "Secret"}
	switch {
	case gk == schema.GroupKind{Kind: "Secret"}:
	case gk == schema.GroupKind{Kind: "ConfigMap"}:
		s.kind = "ConfigMap"
	case historyNamespace == "":
		return nil, fmt.Errorf("ApplySet parent %s is a %s: its history is kept in Secrets of the namespace --history-namespace names", set, gk)
	case set.Mapping.Scope.Name() == meta.RESTScopeNameNamespace && historyNamespace != set.Namespace:
		return nil, fmt.Errorf("ApplySet parent %s lives in namespace %q: --history-namespace must be %q (an ownerReference names an owner of its own namespace)", set, set.Namespace, set.Namespace)
	default:
		s.namespace = historyNamespace
	}
	gvr := secretsGVR
	if s.kind == "ConfigMap" {
		gvr = configMapsGVR
	}
	s.client = r.dynamic.Resource(gvr).Namespace(s.namespace)
	return s, nil
}

func (s *historyStore) selector() string {
	return metav1.FormatLabelSelector(&metav1.LabelSelector{MatchLabels: map[string]string{history.HistoryOfLabel: s.setID}})
}

// list reads every object of the set's revisions.
func (r *runner) listHistory(ctx context.Context, s *historyStore) ([]unstructured.Unstructured, error) {
	var list *unstructured.UnstructuredList
	err := r.retryTransient(ctx, func() error {
		var err error
		list, err = s.client.List(ctx, metav1.ListOptions{LabelSelector: s.selector()})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listing the history of ApplySet %s in namespace %q: %w", s.setID, s.namespace, err)
	}
	return list.Items, nil
}

// readHistory reads the set's revisions with their members.
func (r *runner) readHistory(ctx context.Context, s *historyStore) ([]history.Revision, []unstructured.Unstructured, error) {
	objs, err := r.listHistory(ctx, s)
	if err != nil {
		return nil, nil, err
	}
	revs, err := history.Revisions(objs)
	if err != nil {
		return nil, nil, err
	}
	for i := range revs {
		if revs[i].Unreadable != nil {
			continue
		}
		// One damaged revision is listed as such; the others still read.
		if revs[i].Members, err = history.Members(objs, revs[i].Number); err != nil {
			revs[i].Unreadable = err
		}
	}
	return revs, objs, nil
}

// History lists the revisions of an ApplySet, oldest first, each with the
// configurations it sent (Secret values removed).
func (a *Applier) History(ctx context.Context, ref ApplySetRef) ([]Revision, error) {
	r, err := a.runner(ctx, settings{WriteOptions: WriteOptions{Namespace: ref.Namespace}})
	if err != nil {
		return nil, err
	}
	set, err := prune.ParseSet(ref.ApplySet, r.opts.Namespace, r.mapper)
	if err != nil {
		return nil, err
	}
	store, err := r.storeOf(set, ref.HistoryNamespace)
	if err != nil {
		return nil, err
	}
	revs, _, err := r.readHistory(ctx, store)
	return revs, err
}
