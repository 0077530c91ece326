package schema

// String names a Type in error messages and test output.
func (t Type) String() string {
	switch t {
	case Scalar:
		return "scalar"
	case Object:
		return "object"
	case List:
		return "list"
	}
	return "unknown"
}

// String is the list type's x-kubernetes-list-type name.
func (l ListType) String() string {
	switch l {
	case Set:
		return "set"
	case Map:
		return "map"
	}
	return "atomic"
}

// parseListType is the inverse of ListType.String.
func parseListType(s string) (ListType, bool) {
	for _, l := range []ListType{Atomic, Set, Map} {
		if l.String() == s {
			return l, true
		}
	}
	return Atomic, false
}

// Known reports whether anything is known about the kind; an unknown kind
// merges maps and replaces lists whole. It is safe on a nil Kind.
func (k *Kind) Known() bool {
	return k != nil && k.Root != nil
}
