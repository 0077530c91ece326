package fieldpath

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kapply/kapply/pkg/shown"
)

// Path names a field of an object, or an element of a list, printed like
// spec.template.spec.containers[name=web].image.
type Path []Element

// Element is one step of a Path: a map field, an element of a keyed list
// (by its key fields), an element of a list of plain values (by value), or
// a position in an atomic list.
type Element struct {
	Field string
	Keys  []KeyValue
	Value any
	Index int
	kind  elementKind
}

// KeyValue is one key field of a keyed-list element. A parsed path holds
// the value as text; a path the engine builds holds the decoded value.
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

// Field is the element of a map field.
func Field(name string) Element { return Element{Field: name, kind: fieldElement} }

// Key is the element of a keyed list whose key fields hold these values.
func Key(kvs []KeyValue) Element { return Element{Keys: kvs, kind: keyElement} }

// Value is the element of a list of plain values that equals v.
func Value(v any) Element { return Element{Value: v, kind: valueElement} }

// Index is the element at position i of an atomic list.
func Index(i int) Element { return Element{Index: i, kind: indexElement} }

// KeyOf is the element of a keyed list that selects elem by the key fields
// names, with elem's values of them.
func KeyOf(elem map[string]any, names []string) Element {
	kvs := make([]KeyValue, len(names))
	for i, n := range names {
		kvs[i] = KeyValue{Name: n, Value: elem[n]}
	}
	return Key(kvs)
}

// IsField reports whether e is a map field.
func (e Element) IsField() bool { return e.kind == fieldElement }

// IsKey reports whether e selects a keyed-list element.
func (e Element) IsKey() bool { return e.kind == keyElement }

// IsValue reports whether e selects an element of a list of plain values.
func (e Element) IsValue() bool { return e.kind == valueElement }

// IsIndex reports whether e is a position in an atomic list.
func (e Element) IsIndex() bool { return e.kind == indexElement }

// Fields is the path of nested map fields, e.g. Fields("spec", "replicas").
func Fields(names ...string) Path {
	p := make(Path, len(names))
	for i, n := range names {
		p[i] = Field(n)
	}
	return p
}

// Child returns a new path with e appended; p is left as it was.
func (p Path) Child(e Element) Path {
	out := make(Path, len(p), len(p)+1)
	copy(out, p)
	return append(out, e)
}

// String prints the path in the syntax Parse reads. Field names holding a
// separator are quoted (metadata.labels["app.kubernetes.io/name"]).
func (p Path) String() string {
	var b strings.Builder
	for i, e := range p {
		b.WriteString(e.text(i == 0))
	}
	return b.String()
}

// MarshalText makes JSON and YAML print the path as String does (as
// `kapply status -o json` shows it), not as a list of elements.
func (p Path) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// String prints one element as it appears after a parent.
func (e Element) String() string { return e.text(true) }

func (e Element) text(first bool) string {
	switch e.kind {
	case keyElement:
		parts := make([]string, len(e.Keys))
		for i, kv := range e.Keys {
			parts[i] = kv.Name + "=" + quoteValue(ScalarText(kv.Value))
		}
		return "[" + strings.Join(parts, ",") + "]"
	case valueElement:
		return "[=" + quoteValue(ScalarText(e.Value)) + "]"
	case indexElement:
		return fmt.Sprintf("[%d]", e.Index)
	}
	switch {
	case e.Field == "" || strings.ContainsAny(e.Field, ".[]=,\" ") || hasUnprintable(e.Field):
		return "[" + strconv.Quote(e.Field) + "]"
	case first:
		return e.Field
	}
	return "." + e.Field
}

func quoteValue(v string) string {
	if v == "" || strings.ContainsAny(v, ",]\"") || hasUnprintable(v) {
		return strconv.Quote(v)
	}
	return v
}

// hasUnprintable reports a newline, tab or other control character: a
// key under preserve-unknown-fields may hold any, and printed raw it
// would add lines or columns to a table a person confirms.
func hasUnprintable(s string) bool { return shown.NeedsQuotes(s) }

// ScalarText is a scalar as a path prints it and matches it: 80, web, true.
// Maps and lists have no text (a NUL that no text equals).
func ScalarText(v any) string {
	switch x := v.(type) {
	case map[string]any, []any:
		return "\x00"
	case string:
		return x
	}
	if i, ok := integer(v); ok {
		return strconv.FormatInt(i, 10)
	}
	return fmt.Sprint(v)
}
