package apply

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
)

// ApplySet labels and annotations (KEP-3659), as kubectl writes them.
const (
	applySetIDLabel         = "applyset.kubernetes.io/id"
	applySetPartOfLabel     = "applyset.kubernetes.io/part-of"
	applySetToolingKey      = "applyset.kubernetes.io/tooling"
	applySetKindsKey        = "applyset.kubernetes.io/contains-group-kinds"
	applySetNamespacesKey   = "applyset.kubernetes.io/additional-namespaces"
	applySetDeprecatedGRKey = "applyset.kubernetes.io/contains-group-resources"
	// applySetTooling is written on parents kapply creates. kubectl refuses
	// to touch a set whose tooling is not "kubectl/..."; kapply manages sets
	// exactly as kubectl does, so it names kubectl's tooling to let both
	// prune the same set.
	applySetTooling = "kubectl/v1.37.1"
	// applySetFieldManager owns the parent's ApplySet fields: kubectl's name, so
	// that kubectl and kapply update the same set without field conflicts.
	applySetFieldManager = "kubectl-applyset"
)

// toolsSharingSets are the tooling names whose sets kapply may manage.
var toolsSharingSets = []string{"kubectl", "kapply"}

var defaultParentGVR = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// applySet is the set of objects a run prunes from, tracked by a parent
// object (a Secret by default).
type applySet struct {
	mapping   *meta.RESTMapping
	name      string
	namespace string
	// kinds and namespaces hold the set's members as the parent recorded
	// them before this run (current) and as this run applies them (updated).
	currentKinds, updatedKinds           sets.Set[schema.GroupKind]
	currentNamespaces, updatedNamespaces sets.Set[string]
	tooling                              string
}

// parseApplySet reads --applyset=[RESOURCE[.GROUP]/]NAME; a namespaced
// parent lives in the run's namespace.
func (r *runner) parseApplySet(ref string) (*applySet, error) {
	gvr, name := defaultParentGVR, ref
	if resource, rest, typed := strings.Cut(ref, "/"); typed {
		gvr, name = schema.ParseGroupResource(resource).WithVersion(""), rest
	}
	if name == "" {
		return nil, fmt.Errorf("PruneOptions.ApplySet %q: the parent's name is empty", ref)
	}
	gvk, err := r.mapper.KindFor(gvr)
	if err != nil {
		return nil, fmt.Errorf("PruneOptions.ApplySet %q: %w", ref, err)
	}
	mapping, err := r.mapper.RESTMapping(gvk.GroupKind())
	if err != nil {
		return nil, fmt.Errorf("PruneOptions.ApplySet %q: %w", ref, err)
	}
	set := &applySet{mapping: mapping, name: name, tooling: applySetTooling,
		currentKinds: sets.New[schema.GroupKind](), updatedKinds: sets.New[schema.GroupKind](),
		currentNamespaces: sets.New[string](), updatedNamespaces: sets.New[string]()}
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		set.namespace = r.opts.Namespace
	}
	return set, nil
}

// ID is the set's identity: base64url(sha256(name.namespace.kind.group)).
func (s *applySet) ID() string {
	gvk := s.mapping.GroupVersionKind
	sum := sha256.Sum256([]byte(strings.Join([]string{s.name, s.namespace, gvk.Kind, gvk.Group}, ".")))
	return fmt.Sprintf("applyset-%s-v1", base64.RawURLEncoding.EncodeToString(sum[:]))
}

func (s *applySet) String() string {
	return fmt.Sprintf("%s/%s", strings.ToLower(s.mapping.GroupVersionKind.Kind), s.name)
}

// fetch reads the parent, if any, and the members it records. A parent of
// another tool, or with another ID, is an error: that set is not ours.
func (r *runner) fetchApplySet(ctx context.Context, s *applySet) error {
	var parent *unstructured.Unstructured
	err := r.retryTransient(ctx, func() error {
		var err error
		parent, err = r.dynamic.Resource(s.mapping.Resource).Namespace(s.namespace).Get(ctx, s.name, metav1.GetOptions{})
		return err
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading ApplySet parent %s: %w", s, err)
	}
	annotations := parent.GetAnnotations()
	tooling, ok := annotations[applySetToolingKey]
	if !ok || !slices.Contains(toolsSharingSets, strings.Split(tooling, "/")[0]) {
		return fmt.Errorf("ApplySet parent %s exists and is managed by tooling %q, not kubectl or kapply", s, tooling)
	}
	if id := parent.GetLabels()[applySetIDLabel]; id != s.ID() {
		return fmt.Errorf("ApplySet parent %s has %s=%q, want %q", s, applySetIDLabel, id, s.ID())
	}
	s.tooling = tooling
	return s.readMembers(annotations, r.mapper)
}

func (s *applySet) readMembers(annotations map[string]string, mapper meta.RESTMapper) error {
	if kinds, ok := annotations[applySetKindsKey]; ok {
		for _, gk := range splitList(kinds) {
			s.currentKinds.Insert(schema.ParseGroupKind(gk))
		}
	} else if grs, ok := annotations[applySetDeprecatedGRKey]; ok {
		for _, gr := range splitList(grs) {
			gvk, err := mapper.KindFor(schema.ParseGroupResource(gr).WithVersion(""))
			if err != nil {
				return fmt.Errorf("reading %s of ApplySet parent %s: %w", applySetDeprecatedGRKey, s, err)
			}
			s.currentKinds.Insert(gvk.GroupKind())
		}
	} else {
		return fmt.Errorf("ApplySet parent %s lacks the %s annotation", s, applySetKindsKey)
	}
	s.currentNamespaces.Insert(splitList(annotations[applySetNamespacesKey])...)
	if s.namespace != "" {
		s.currentNamespaces.Insert(s.namespace)
	}
	return nil
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// add records an object the run applies as a member, and labels it so. The
// object is not mapped yet: a namespace is counted for it (the default one
// when it names none) even if it turns out cluster-scoped, which only widens
// the next prune's search.
func (s *applySet) add(o *object, defaultNamespace string) {
	labels := o.Obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[applySetPartOfLabel] = s.ID()
	o.Obj.SetLabels(labels)
	s.updatedKinds.Insert(o.Obj.GroupVersionKind().GroupKind())
	ns := o.Obj.GetNamespace()
	if ns == "" {
		ns = defaultNamespace
	}
	if ns != "" {
		s.updatedNamespaces.Insert(ns)
	}
}

// writeParent records the members on the parent with a server-side apply,
// creating it if needed. superset keeps the members of before this run too:
// written before applying, it makes an interrupted run forget nobody.
func (r *runner) writeParent(ctx context.Context, s *applySet, superset bool) error {
	if r.opts.DryRun == ClientDryRun {
		return nil
	}
	kinds, namespaces := s.updatedKinds, s.updatedNamespaces
	if superset {
		kinds, namespaces = kinds.Union(s.currentKinds), namespaces.Union(s.currentNamespaces)
	}
	body, err := json.Marshal(s.parentPatch(kinds, namespaces))
	if err != nil {
		return fmt.Errorf("encoding ApplySet parent %s: %w", s, err)
	}
	client := r.dynamic.Resource(s.mapping.Resource).Namespace(s.namespace)
	force := true // the set's fields are ours, even if kubectl wrote them last
	err = r.retryTransient(ctx, func() error {
		_, err := client.Patch(ctx, s.name, types.ApplyPatchType, body,
			metav1.PatchOptions{FieldManager: applySetFieldManager, Force: &force, DryRun: r.serverDryRun()})
		return err
	})
	if err != nil {
		return fmt.Errorf("updating ApplySet parent %s: %w", s, err)
	}
	return nil
}

func (s *applySet) parentPatch(kinds sets.Set[schema.GroupKind], namespaces sets.Set[string]) map[string]any {
	var gks []string
	for gk := range kinds {
		gks = append(gks, gk.String())
	}
	slices.Sort(gks)
	ns := sets.List(namespaces.Clone().Delete(s.namespace))
	gvk := s.mapping.GroupVersionKind
	metadata := map[string]any{
		"name":   s.name,
		"labels": map[string]any{applySetIDLabel: s.ID()},
		"annotations": map[string]any{
			applySetToolingKey:    s.tooling,
			applySetKindsKey:      strings.Join(gks, ","),
			applySetNamespacesKey: strings.Join(ns, ","),
		},
	}
	if s.namespace != "" {
		metadata["namespace"] = s.namespace
	}
	return map[string]any{"apiVersion": gvk.GroupVersion().String(), "kind": gvk.Kind, "metadata": metadata}
}
