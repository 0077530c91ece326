package fieldpath

import "slices"

// UnionKeys returns the keys of both maps, sorted: the fields two objects
// are compared on (or the members of two sets of objects), in an order
// that does not depend on map iteration.
func UnionKeys[V any](a, b map[string]V) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, inA := a[k]; !inA {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// EachField calls fn for each field a or b holds, in key order, with the
// field's path under at and its value on each side (nil where that side
// lacks it). It is the one step of the walkers that compare two objects
// field by field (plan changes, ignore classes, diff events); each decides
// itself where to descend. Hand-written: structured-merge-diff's typed
// comparison needs a schema, which a custom resource may lack, and its
// paths are not this package's Path.
func EachField(at Path, a, b map[string]any, fn func(p Path, av, bv any)) {
	for _, k := range UnionKeys(a, b) {
		fn(at.Child(Field(k)), a[k], b[k])
	}
}
