package prune

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
)

// objectKey identifies an object across versions: group, kind, namespace, name.
type objectKey struct {
	gk              schema.GroupKind
	namespace, name string
}

func keyOf(u *unstructured.Unstructured) objectKey {
	return objectKey{gk: u.GroupVersionKind().GroupKind(), namespace: u.GetNamespace(), name: u.GetName()}
}

// Declared are the objects a run applied, which pruning keeps. They are
// told by UID, as kubectl tells them: one object served under two groups
// (an Event as v1 and as events.k8s.io/v1) is listed under both, and only
// its UID says it is the one just applied. The file's group, kind and name
// also count, so that an object recreated by someone else since it was
// applied is not deleted either.
type Declared struct {
	uids sets.Set[types.UID]
	keys sets.Set[objectKey]
}

// NewDeclared returns an empty set of declared objects.
func NewDeclared() Declared {
	return Declared{uids: sets.New[types.UID](), keys: sets.New[objectKey]()}
}

// AddFile declares an object of the files, by group, kind, namespace and
// name.
func (d Declared) AddFile(obj *unstructured.Unstructured) { d.keys.Insert(keyOf(obj)) }

// AddApplied declares an object the run wrote or replaced, by UID (none:
// ignored).
func (d Declared) AddApplied(obj *unstructured.Unstructured) {
	if obj != nil && obj.GetUID() != "" {
		d.uids.Insert(obj.GetUID())
	}
}

// Has tells a live object the run declared.
func (d Declared) Has(live *unstructured.Unstructured) bool {
	return d.uids.Has(live.GetUID()) || d.keys.Has(keyOf(live))
}

// Lacks tells a live object the run did not declare: a candidate to prune.
func (d Declared) Lacks(live *unstructured.Unstructured) bool { return !d.Has(live) }
