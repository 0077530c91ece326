package schema

import "maps"

// embed marks n as an embedded resource (x-kubernetes-embedded-resource).
func embed(n *Node) {
	n.Embedded = true
	addObjectFields(n)
}

// addObjectFields gives n the apiVersion, kind and metadata every Kubernetes
// object has, whatever the schema declared for them: the server treats
// metadata as ObjectMeta in any case.
func addObjectFields(n *Node) {
	n.Type = Object
	n.Fields = maps.Clone(n.Fields)
	if n.Fields == nil {
		n.Fields = map[string]*Node{}
	}
	for _, name := range []string{"apiVersion", "kind"} {
		if n.Fields[name] == nil {
			n.Fields[name] = &Node{Type: Scalar}
		}
	}
	n.Fields["metadata"] = objectMetaNode()
}

// objectMetaNode is ObjectMeta as both dialects read it from the API
// server's own schema: labels and annotations merge per key, finalizers are
// a set, ownerReferences merge by uid, managedFields are replaced whole. It
// is built fresh on each call so callers may own it.
func objectMetaNode() *Node {
	scalar := &Node{Type: Scalar}
	stringMap := func() *Node { return &Node{Type: Object, Elem: scalar} }
	fields := map[string]*Node{
		"labels":      stringMap(),
		"annotations": stringMap(),
		"finalizers":  {Type: List, List: Set, Elem: scalar},
		"ownerReferences": {Type: List, List: Map, Keys: []string{"uid"},
			Elem: objectOf(scalar, "apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion")},
		"managedFields": {Type: List, List: Atomic, Elem: &Node{Type: Object, PreserveUnknown: true}},
	}
	for _, name := range []string{"name", "generateName", "namespace", "uid", "resourceVersion",
		"selfLink", "generation", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"} {
		fields[name] = scalar
	}
	return &Node{Type: Object, Fields: fields}
}

// objectOf is a struct whose named fields all share the node f.
func objectOf(f *Node, names ...string) *Node {
	n := &Node{Type: Object, Fields: make(map[string]*Node, len(names))}
	for _, name := range names {
		n.Fields[name] = f
	}
	return n
}
