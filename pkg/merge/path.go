package merge

import "github.com/kapply/kapply/pkg/fieldpath"

// Paths of changes, warnings and errors are fieldpath.Paths.

// at is a path under construction: a cheap linked list walked only when a
// change, warning or error is recorded, so that merging large lists does not
// allocate a path per element.
type at struct {
	parent *at
	elem   fieldpath.Element
}

func (a *at) field(name string) *at {
	return &at{parent: a, elem: fieldpath.Field(name)}
}

func (a *at) key(names []string, elem map[string]any) *at {
	return &at{parent: a, elem: fieldpath.KeyOf(elem, names)}
}

func (a *at) value(v any) *at {
	return &at{parent: a, elem: fieldpath.Value(v)}
}

func (a *at) index(i int) *at {
	return &at{parent: a, elem: fieldpath.Index(i)}
}

// path materializes the linked list; the root (nil) is the empty path.
func (a *at) path() fieldpath.Path {
	n := 0
	for p := a; p != nil; p = p.parent {
		n++
	}
	out := make(fieldpath.Path, n)
	for p := a; p != nil; p = p.parent {
		n--
		out[n] = p.elem
	}
	return out
}
