// Package delete holds the rules of deleting declared or pruned objects:
// the order (dependents first, then CRDs, then Namespaces), the DELETE
// request's options (cascade, grace period, the preconditions that make
// a deletion hit the object that was read and no newer one), which
// answers mean "gone already", and how an unfinished deletion is told.
// It sends nothing: pkg/apply's Applier sends the requests through its
// clients and retries, and awaits deletions with pkg/wait.
package delete

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	namespaceGK = schema.GroupKind{Kind: "Namespace"}
	crdGK       = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}
)

// Order groups the places of objects of the given kinds in the order they
// are deleted: dependents first, then CustomResourceDefinitions (their
// custom resources gone by then), then Namespaces (what is in them gone
// by then); each group in input order. There are always three groups.
func Order(kinds []schema.GroupKind) [][]int {
	var rest, crds, namespaces []int
	for i, gk := range kinds {
		switch gk {
		case namespaceGK:
			namespaces = append(namespaces, i)
		case crdGK:
			crds = append(crds, i)
		default:
			rest = append(rest, i)
		}
	}
	return [][]int{rest, crds, namespaces}
}
