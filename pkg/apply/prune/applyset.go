package prune

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
)

// ApplySet labels and annotations (KEP-3659), as kubectl writes them.
const (
	applySetIDLabel = "applyset.kubernetes.io/id"
	// PartOfLabel labels each member with its set's ID.
	PartOfLabel             = "applyset.kubernetes.io/part-of"
	applySetToolingKey      = "applyset.kubernetes.io/tooling"
	applySetKindsKey        = "applyset.kubernetes.io/contains-group-kinds"
	applySetNamespacesKey   = "applyset.kubernetes.io/additional-namespaces"
	applySetDeprecatedGRKey = "applyset.kubernetes.io/contains-group-resources"
	// applySetTooling is written on parents kapply creates. kubectl refuses
	// to touch a set whose tooling is not "kubectl/..."; kapply manages sets
	// exactly as kubectl does, so it names kubectl's tooling to let both
	// prune the same set.
	applySetTooling = "kubectl/v1.37.1"
	// ParentFieldManager owns the parent's ApplySet fields: kubectl's name,
	// so that kubectl and kapply update the same set without field
	// conflicts.
	ParentFieldManager = "kubectl-applyset"
)

// toolsSharingSets are the tooling names whose sets kapply may manage.
var toolsSharingSets = []string{"kubectl", "kapply"}

var defaultParentGVR = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// Set is the set of objects a run prunes from, tracked by a parent
// object (a Secret by default).
type Set struct {
	// Mapping, Name and Namespace locate the parent.
	Mapping   *meta.RESTMapping
	Name      string
	Namespace string
	// kinds and namespaces hold the set's members as the parent recorded
	// them before this run (current) and as this run applies them (updated).
	currentKinds, updatedKinds           sets.Set[schema.GroupKind]
	currentNamespaces, updatedNamespaces sets.Set[string]
	tooling                              string
}

// ParseSet reads the reference [RESOURCE[.GROUP]/]NAME (kubectl's
// --applyset); a namespaced parent lives in namespace.
func ParseSet(ref, namespace string, mapper meta.RESTMapper) (*Set, error) {
	gvr, name := defaultParentGVR, ref
	if resource, rest, typed := strings.Cut(ref, "/"); typed {
		gvr, name = schema.ParseGroupResource(resource).WithVersion(""), rest
	}
	if name == "" {
		return nil, fmt.Errorf("prune.Options.ApplySet %q: the parent's name is empty", ref)
	}
	gvk, err := mapper.KindFor(gvr)
	if err != nil {
		return nil, fmt.Errorf("prune.Options.ApplySet %q: %w", ref, err)
	}
	mapping, err := mapper.RESTMapping(gvk.GroupKind())
	if err != nil {
		return nil, fmt.Errorf("prune.Options.ApplySet %q: %w", ref, err)
	}
	set := &Set{Mapping: mapping, Name: name, tooling: applySetTooling,
		currentKinds: sets.New[schema.GroupKind](), updatedKinds: sets.New[schema.GroupKind](),
		currentNamespaces: sets.New[string](), updatedNamespaces: sets.New[string]()}
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		set.Namespace = namespace
	}
	return set, nil
}

// ID is the set's identity (see SetID).
func (s *Set) ID() string {
	return SetID(s.Mapping.GroupVersionKind.GroupKind(), s.Name, s.Namespace)
}

// SetID is the identity of the ApplySet whose parent is the object of kind
// parent named name in namespace (empty for a cluster-scoped parent), as
// KEP-3659 defines it: base64url(sha256(name.namespace.kind.group)). A
// program that writes the members itself labels them PartOfLabel: SetID.
func SetID(parent schema.GroupKind, name, namespace string) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{name, namespace, parent.Kind, parent.Group}, ".")))
	return fmt.Sprintf("applyset-%s-v1", base64.RawURLEncoding.EncodeToString(sum[:]))
}

func (s *Set) String() string {
	return fmt.Sprintf("%s/%s", strings.ToLower(s.Mapping.GroupVersionKind.Kind), s.Name)
}

// MemberSelector is the label selector of the set's members.
func (s *Set) MemberSelector() string {
	return metav1.FormatLabelSelector(&metav1.LabelSelector{MatchLabels: map[string]string{PartOfLabel: s.ID()}})
}

// Kinds are the kinds of the members, before this run or in it.
func (s *Set) Kinds() sets.Set[schema.GroupKind] { return s.currentKinds.Union(s.updatedKinds) }

// Namespaces are the namespaces of the members, before this run or in it.
func (s *Set) Namespaces() sets.Set[string] { return s.currentNamespaces.Union(s.updatedNamespaces) }

// ReadParent reads the members the live parent records. A parent of
// another tool, or with another ID, is an error: that set is not ours.
func (s *Set) ReadParent(parent *unstructured.Unstructured, mapper meta.RESTMapper) error {
	annotations := parent.GetAnnotations()
	tooling, ok := annotations[applySetToolingKey]
	if !ok || !slices.Contains(toolsSharingSets, strings.Split(tooling, "/")[0]) {
		return fmt.Errorf("ApplySet parent %s exists and is managed by tooling %q, not kubectl or kapply", s, tooling)
	}
	if id := parent.GetLabels()[applySetIDLabel]; id != s.ID() {
		return fmt.Errorf("ApplySet parent %s has %s=%q, want %q", s, applySetIDLabel, id, s.ID())
	}
	s.tooling = tooling
	return s.readMembers(annotations, mapper)
}

func (s *Set) readMembers(annotations map[string]string, mapper meta.RESTMapper) error {
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
	if s.Namespace != "" {
		s.currentNamespaces.Insert(s.Namespace)
	}
	return nil
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// Add records an object the run applies as a member, and labels it so. The
// object is not mapped yet: a namespace is counted for it (the default one
// when it names none) even if it turns out cluster-scoped, which only widens
// the next prune's search.
func (s *Set) Add(obj *unstructured.Unstructured, defaultNamespace string) {
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[PartOfLabel] = s.ID()
	obj.SetLabels(labels)
	ns := obj.GetNamespace()
	if ns == "" {
		ns = defaultNamespace
	}
	s.AddMember(obj.GroupVersionKind().GroupKind(), ns)
}

// AddMember records a member of kind gk in namespace (empty: none) as one
// this run applies, without an object to label (a saved plan's item,
// labelled when it was planned).
func (s *Set) AddMember(gk schema.GroupKind, namespace string) {
	s.updatedKinds.Insert(gk)
	if namespace != "" {
		s.updatedNamespaces.Insert(namespace)
	}
}

// ParentPatch is the server-side apply body that records the members on
// the parent (ParentFieldManager's, forced: the set's fields are ours even
// if kubectl wrote them last). superset keeps the members of before this
// run too: written before applying, it makes an interrupted run forget
// nobody.
func (s *Set) ParentPatch(superset bool) ([]byte, error) {
	kinds, namespaces := s.updatedKinds, s.updatedNamespaces
	if superset {
		kinds, namespaces = kinds.Union(s.currentKinds), namespaces.Union(s.currentNamespaces)
	}
	var gks []string
	for gk := range kinds {
		gks = append(gks, gk.String())
	}
	slices.Sort(gks)
	ns := sets.List(namespaces.Clone().Delete(s.Namespace))
	gvk := s.Mapping.GroupVersionKind
	metadata := map[string]any{
		"name":   s.Name,
		"labels": map[string]any{applySetIDLabel: s.ID()},
		"annotations": map[string]any{
			applySetToolingKey:    s.tooling,
			applySetKindsKey:      strings.Join(gks, ","),
			applySetNamespacesKey: strings.Join(ns, ","),
		},
	}
	if s.Namespace != "" {
		metadata["namespace"] = s.Namespace
	}
	body, err := json.Marshal(map[string]any{"apiVersion": gvk.GroupVersion().String(), "kind": gvk.Kind, "metadata": metadata})
	if err != nil {
		return nil, fmt.Errorf("encoding ApplySet parent %s: %w", s, err)
	}
	return body, nil
}
