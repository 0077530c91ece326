package schema

// decorates reports whether a schema that references a component adds
// extensions that change how the field merges, so that the field needs its
// own copy of the component's node rather than the shared one.
func (b *builder) decorates(s *rawSchema) bool {
	if s.PreserveUnknown || s.IntOrString || s.Embedded || s.Format == "int-or-string" {
		return true
	}
	if b.dialect == structuralDialect {
		return s.MapType != ""
	}
	ps := s.patchStrategies()
	return ps.retain || ps.replace
}

// applyFlags sets the object-level extensions of s on n, whose Type is
// already known.
func (b *builder) applyFlags(n *Node, s *rawSchema) {
	if s.PreserveUnknown {
		n.PreserveUnknown = true
	}
	if s.IntOrString || s.Format == "int-or-string" {
		n.Type, n.IntOrString = Scalar, true
	}
	if n.Type == Object {
		b.applyObjectFlags(n, s)
	}
	if s.Embedded {
		embed(n)
	}
}

// applyObjectFlags: map-type counts only for custom resources (strategic
// merge patch ignores it); patch strategies only for built-ins (custom
// resources cannot declare one). Of those, retainKeys clears live fields the
// file leaves out, and replace makes the object atomic: the server's
// strategic merge (mergeMapHandler) takes the patch's map whole when live
// has the map, so the file's map replaces live's.
func (b *builder) applyObjectFlags(n *Node, s *rawSchema) {
	if b.dialect == structuralDialect {
		switch s.MapType {
		case "atomic":
			n.AtomicMap = true
		case "granular":
			n.AtomicMap = false
		}
		return
	}
	ps := s.patchStrategies()
	if ps.retain {
		n.RetainKeys = true
	}
	if ps.replace {
		n.AtomicMap = true
	}
}
