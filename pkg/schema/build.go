package schema

import "strings"

// dialect is which extensions decide how lists and maps merge.
type dialect int

const (
	// strategicDialect reads x-kubernetes-patch-strategy and patch-merge-key,
	// exactly as strategic merge patch does for built-in kinds; it ignores
	// x-kubernetes-list-type and map-type, which strategic merge patch never
	// consults.
	strategicDialect dialect = iota
	// structuralDialect reads x-kubernetes-list-type, list-map-keys and
	// map-type, as the API server does for custom resources.
	structuralDialect
)

// builder turns raw schemas into a *Node graph. Components are built once
// and memoized before their properties are visited, so a recursive schema
// (JSONSchemaProps) closes into a cycle instead of recursing forever.
type builder struct {
	schemas map[string]*rawSchema
	dialect dialect
	memo    map[string]*Node
	// building holds components being filled; pending holds copies waiting
	// for their source to be complete (see derive).
	building map[*Node]bool
	pending  map[*Node]bool
	fixups   []fixup
}

// fixup finishes a node derived from one that was still being built.
type fixup struct {
	dst, src *Node
	edit     func(*Node)
}

func newBuilder(schemas map[string]*rawSchema, d dialect) *builder {
	return &builder{
		schemas:  schemas,
		dialect:  d,
		memo:     map[string]*Node{},
		building: map[*Node]bool{},
		pending:  map[*Node]bool{},
	}
}

// root builds the node of a raw schema and completes every deferred copy, so
// the returned graph is whole.
func (b *builder) root(s *rawSchema) *Node {
	n := b.node(s)
	b.finish()
	return n
}

// component returns the memoized node of a "#/components/schemas/..." ref.
// Refs were checked when the document was parsed; an unknown one is nil.
func (b *builder) component(ref string) *Node {
	if n, ok := b.memo[ref]; ok {
		return n
	}
	s, ok := b.schemas[componentName(ref)]
	if !ok {
		return nil
	}
	n := &Node{}
	b.memo[ref] = n
	b.building[n] = true
	b.fill(n, s)
	delete(b.building, n)
	return n
}

const componentPrefix = "#/components/schemas/"

func componentName(ref string) string {
	return strings.TrimPrefix(ref, componentPrefix)
}

// node returns the node of a property, item or map-value schema. A plain
// reference shares the component's node; a reference decorated with merge
// extensions gets its own copy.
func (b *builder) node(s *rawSchema) *Node {
	if s == nil {
		return nil
	}
	if ref := s.target(); ref != "" && !b.decorates(s) {
		return b.component(ref)
	}
	n := &Node{}
	b.fill(n, s)
	return n
}

// fill describes s in n: either a copy of the referenced component with s's
// own extensions on top, or the inline schema itself.
func (b *builder) fill(n *Node, s *rawSchema) {
	if ref := s.target(); ref != "" {
		if base := b.component(ref); base != nil {
			b.derive(n, base, func(m *Node) { b.applyFlags(m, s) })
			return
		}
	}
	b.fillInline(n, s)
	b.applyFlags(n, s)
}

// derive makes n a copy of base changed by edit. When base is still being
// built (a cycle) the copy would miss fields, so it is made in finish.
func (b *builder) derive(n, base *Node, edit func(*Node)) {
	if b.building[base] || b.pending[base] {
		b.pending[n] = true
		b.fixups = append(b.fixups, fixup{dst: n, src: base, edit: edit})
		return
	}
	*n = *base
	edit(n)
}

// derived is derive for a node that does not exist yet.
func (b *builder) derived(base *Node, edit func(*Node)) *Node {
	n := &Node{}
	b.derive(n, base, edit)
	return n
}

// finish completes deferred copies, sources first; a copy whose source is
// itself waiting is retried on the next pass. Only a cycle made purely of
// aliases makes no progress, and its nodes stay Unknown.
func (b *builder) finish() {
	for progress := true; progress && len(b.fixups) > 0; {
		progress = false
		rest := b.fixups[:0]
		for _, f := range b.fixups {
			if b.pending[f.src] {
				rest = append(rest, f)
				continue
			}
			*f.dst = *f.src
			f.edit(f.dst)
			delete(b.pending, f.dst)
			progress = true
		}
		b.fixups = rest
	}
	b.fixups = nil
	clear(b.pending)
}
