package schema

import "slices"

// fillInline describes a schema that is not a reference.
func (b *builder) fillInline(n *Node, s *rawSchema) {
	switch shapeOf(s) {
	case Scalar:
		n.Type = Scalar
		n.IntOrString = s.IntOrString || s.Format == "int-or-string"
	case List:
		b.fillList(n, s)
	case Object:
		b.fillObject(n, s)
	default:
		n.Type = Unknown
	}
}

// fillObject describes a struct (properties) or a map (additionalProperties).
func (b *builder) fillObject(n *Node, s *rawSchema) {
	n.Type = Object
	if len(s.Properties) > 0 {
		n.Fields = make(map[string]*Node, len(s.Properties))
		for name, p := range s.Properties {
			n.Fields[name] = b.node(p)
		}
	}
	n.Elem = b.node(s.AdditionalProperties.Schema)
}

func (b *builder) fillList(n *Node, s *rawSchema) {
	n.Type = List
	n.Elem = b.node(s.Items.Schema)
	if b.dialect == strategicDialect {
		b.strategicList(n, s)
		return
	}
	structuralList(n, s)
}

// strategicList mirrors strategic merge patch: only patch-strategy "merge"
// makes a list granular — by patchMergeKey for objects, as a set for
// primitives — and x-kubernetes-list-type is ignored, since the server
// ignores it when it applies the patch. Any other strategy ("replace", or
// none) leaves the list atomic: the patch carries it whole.
func (b *builder) strategicList(n *Node, s *rawSchema) {
	ps := s.patchStrategies()
	items := b.shape(s.Items.Schema)
	switch {
	case ps.merge && items == Object && s.PatchMergeKey != "":
		n.List = Map
		n.Keys = []string{s.PatchMergeKey}
		n.IdentityKeys = widerKeys(s.ListMapKeys, n.Keys)
	case ps.merge && items == Scalar:
		n.List = Set
	}
	if ps.retain && items == Object && n.Elem != nil {
		n.Elem = b.derived(n.Elem, func(e *Node) { e.RetainKeys = true })
	}
}

// structuralList reads x-kubernetes-list-type; unmarked lists are atomic.
func structuralList(n *Node, s *rawSchema) {
	switch s.ListType {
	case "set":
		n.List = Set
	case "map":
		if len(s.ListMapKeys) > 0 {
			n.List = Map
			n.Keys = slices.Clone(s.ListMapKeys)
		}
	}
}

// widerKeys returns the list-map-keys when they identify elements more
// finely than the merge key (containerPort vs containerPort+protocol).
func widerKeys(mapKeys, keys []string) []string {
	if len(mapKeys) <= len(keys) {
		return nil
	}
	for _, k := range keys {
		if !slices.Contains(mapKeys, k) {
			return nil
		}
	}
	return slices.Clone(mapKeys)
}
