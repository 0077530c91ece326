package schema

// Kind is the schema of one kind of object (one group-version-kind).
type Kind struct {
	// Root describes the whole object; nil when nothing is known.
	Root *Node
	// Strategic is true for built-in kinds, whose lists merge by
	// x-kubernetes-patch-strategy and which the server patches with a
	// strategic merge patch. Custom resources (false) merge lists by
	// x-kubernetes-list-type and are patched with a JSON merge patch.
	Strategic bool
}
