package merge

import (
	"fmt"
	"strings"
)

// Path names a field of an object, printed like
// spec.template.spec.containers[name=web].image.
type Path []Element

// Element is one step of a Path: a map field, an element of a keyed list
// (Keys), an element of a set list (Value) or an index into an atomic list.
type Element struct {
	Field string
	Keys  []KeyValue
	Value any
	Index int
	kind  elementKind
}

// KeyValue is one key field of a keyed-list element.
type KeyValue struct {
	Name  string
	Value any
}

type elementKind int

const (
	fieldElement elementKind = iota
	keyElement
	valueElement
	indexElement
)

// String prints the path; field names holding separators are quoted.
func (p Path) String() string {
	var b strings.Builder
	for i, e := range p {
		text := e.String()
		// A quoted field prints as [".."], which needs no dot before it.
		if e.kind == fieldElement && i > 0 && !strings.HasPrefix(text, "[") {
			b.WriteByte('.')
		}
		b.WriteString(text)
	}
	return b.String()
}

// String prints one element.
func (e Element) String() string {
	switch e.kind {
	case keyElement:
		parts := make([]string, len(e.Keys))
		for i, kv := range e.Keys {
			parts[i] = fmt.Sprintf("%s=%v", kv.Name, kv.Value)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case valueElement:
		return fmt.Sprintf("[=%v]", e.Value)
	case indexElement:
		return fmt.Sprintf("[%d]", e.Index)
	}
	if strings.ContainsAny(e.Field, ".[]=, ") {
		return fmt.Sprintf("[%q]", e.Field)
	}
	return e.Field
}

// at is a path under construction: a cheap linked list walked only when a
// change, warning or error is recorded, so that merging large lists does not
// allocate a path per element.
type at struct {
	parent *at
	elem   Element
}

func (a *at) field(name string) *at {
	return &at{parent: a, elem: Element{Field: name, kind: fieldElement}}
}

func (a *at) key(names []string, elem map[string]any) *at {
	kvs := make([]KeyValue, len(names))
	for i, n := range names {
		kvs[i] = KeyValue{Name: n, Value: elem[n]}
	}
	return &at{parent: a, elem: Element{Keys: kvs, kind: keyElement}}
}

func (a *at) value(v any) *at {
	return &at{parent: a, elem: Element{Value: v, kind: valueElement}}
}

func (a *at) index(i int) *at {
	return &at{parent: a, elem: Element{Index: i, kind: indexElement}}
}

// path materializes the linked list; the root (nil) is the empty path.
func (a *at) path() Path {
	n := 0
	for p := a; p != nil; p = p.parent {
		n++
	}
	out := make(Path, n)
	for p := a; p != nil; p = p.parent {
		n--
		out[n] = p.elem
	}
	return out
}
