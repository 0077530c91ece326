package fieldpath

import (
	"cmp"
	"strings"
)

// Equals reports whether p and q name the same field: element by element,
// key and list values compared as text (ScalarText), as String prints them
// and Parse reads them back — a parsed [port=80] equals the engine's
// [port=80] decoded as a number.
func (p Path) Equals(q Path) bool {
	return len(p) == len(q) && p.HasPrefix(q)
}

// HasPrefix reports whether prefix names p or a field above it.
func (p Path) HasPrefix(prefix Path) bool {
	if len(prefix) > len(p) {
		return false
	}
	for i, e := range prefix {
		if e.Compare(p[i]) != 0 {
			return false
		}
	}
	return true
}

// Compare orders paths element by element, a path before those below it:
// -1 when p sorts before q, 0 when they are Equal, +1 after. The order is
// stable across runs (no map order), which is what sorting paths needs.
func (p Path) Compare(q Path) int {
	for i := range min(len(p), len(q)) {
		if c := p[i].Compare(q[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(p), len(q))
}

// Compare orders elements: map fields, then keyed-list elements, then
// list values, then positions; within a kind by name, keys or value text.
func (e Element) Compare(f Element) int {
	if c := cmp.Compare(e.kind, f.kind); c != 0 {
		return c
	}
	switch e.kind {
	case keyElement:
		return compareKeys(e.Keys, f.Keys)
	case valueElement:
		return strings.Compare(ScalarText(e.Value), ScalarText(f.Value))
	case indexElement:
		return cmp.Compare(e.Index, f.Index)
	}
	return strings.Compare(e.Field, f.Field)
}

func compareKeys(a, b []KeyValue) int {
	for i := range min(len(a), len(b)) {
		if c := strings.Compare(a[i].Name, b[i].Name); c != 0 {
			return c
		}
		if c := strings.Compare(ScalarText(a[i].Value), ScalarText(b[i].Value)); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}
