package schema

// Type is the shape of a field.
type Type int

const (
	// Unknown is a field without a usable schema (absent, or
	// x-kubernetes-preserve-unknown-fields): maps merge, lists are atomic.
	Unknown Type = iota
	// Scalar is a string, number, boolean or int-or-string: replaced whole.
	Scalar
	// Object is a map: a struct with named Fields, or a string-keyed map whose
	// values are described by Elem (additionalProperties).
	Object
	// List is an array whose items are described by Elem.
	List
)

// ListType is how a list merges.
type ListType int

const (
	// Atomic lists are replaced whole by the file.
	Atomic ListType = iota
	// Set lists merge their primitive values.
	Set
	// Map lists merge element by element, matched by Keys.
	Map
)

// Node is the merge strategy of one field and, through Fields and Elem, of
// everything below it. Graphs may be cyclic (recursive schemas such as
// JSONSchemaProps); walk them lazily along an object, never exhaustively.
type Node struct {
	Type Type

	// Fields are the named properties of a struct-like Object.
	Fields map[string]*Node
	// Elem describes list items, or the values of a map-like Object.
	Elem *Node

	// List is how a List merges.
	List ListType
	// Keys identify elements of a Map list: the patchMergeKey for built-in
	// kinds (one field), x-kubernetes-list-map-keys for custom resources or
	// user-declared keys (one or several fields).
	Keys []string
	// IdentityKeys are the x-kubernetes-list-map-keys of a built-in list when
	// they are wider than Keys (container ports: patchMergeKey containerPort,
	// identity containerPort+protocol). Elements equal on Keys but different on
	// IdentityKeys are ambiguous for strategic merge patch.
	IdentityKeys []string

	// RetainKeys clears the live fields of this Object that the file does not
	// set, when the file sets the Object (patchStrategy retainKeys).
	RetainKeys bool
	// AtomicMap is an Object the file replaces whole: x-kubernetes-map-type
	// atomic for custom resources, x-kubernetes-patch-strategy replace for
	// built-in kinds (a PodDisruptionBudget's spec.selector).
	AtomicMap bool
	// PreserveUnknown marks x-kubernetes-preserve-unknown-fields: fields not in
	// Fields are kept and merged as Unknown.
	PreserveUnknown bool
	// IntOrString marks x-kubernetes-int-or-string: the value keeps its type.
	IntOrString bool
	// Embedded marks x-kubernetes-embedded-resource: an object with its own
	// apiVersion, kind and metadata.
	Embedded bool
}

// Field returns the schema of the named field of an Object, or nil when the
// field is unknown. It is safe on a nil Node.
func (n *Node) Field(name string) *Node {
	if n == nil {
		return nil
	}
	if f, ok := n.Fields[name]; ok {
		return f
	}
	if n.Type == Object && len(n.Fields) == 0 {
		return n.Elem
	}
	return nil
}

// Item returns the schema of the elements of a List or of the values of a
// map-like Object, or nil. It is safe on a nil Node.
func (n *Node) Item() *Node {
	if n == nil {
		return nil
	}
	return n.Elem
}

// TypeOf returns the node's Type; a nil Node is Unknown.
func (n *Node) TypeOf() Type {
	if n == nil {
		return Unknown
	}
	return n.Type
}

// ListStrategy returns how a list at this node merges, with its keys; a nil
// Node or a non-list is Atomic.
func (n *Node) ListStrategy() (ListType, []string) {
	if n == nil || n.Type != List {
		return Atomic, nil
	}
	return n.List, n.Keys
}
