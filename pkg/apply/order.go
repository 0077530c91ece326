package apply

// phase is a group of objects applied together; later phases may depend on
// earlier ones (objects inside a Namespace, custom resources of a CRD).
type phase struct {
	indexes []int
	// crds marks the phase of CustomResourceDefinitions, which the run
	// waits on until they are established.
	crds bool
}

// phases orders objects as kubectl users expect a tree to apply: Namespaces
// first, then CRDs, then everything else, each in input order. There are
// always three phases, Namespaces at index 0.
func phases(objects []*object) []phase {
	var namespaces, crds, rest phase
	crds.crds = true
	for i, o := range objects {
		switch o.Obj.GroupVersionKind().GroupKind() {
		case namespaceGK:
			namespaces.indexes = append(namespaces.indexes, i)
		case crdGK:
			crds.indexes = append(crds.indexes, i)
		default:
			rest.indexes = append(rest.indexes, i)
		}
	}
	return []phase{namespaces, crds, rest}
}
