package merge

import (
	"strings"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/schema"
)

// merger computes the merged object. It holds only the kind's patch flavour
// and the warnings gathered on the way; every input is read-only.
type merger struct {
	strategic bool
	warnings  []Warning
}

func (m *merger) warn(where *at, message string) {
	m.warnings = append(m.warnings, Warning{Path: where.path(), Message: message})
}

// mergeObject merges the file's map f into the live map c (nil when live
// lacks it), deleting the fields that last-applied l had and f dropped, and
// keeping the fields only live has.
func (m *merger) mergeObject(where *at, l, f, c map[string]any, n *schema.Node) (map[string]any, error) {
	if err := m.checkDirectiveKeys(where, f); err != nil {
		return nil, err
	}
	if m.replacesWhole(n) {
		l, c = nil, nil
	}
	out := make(map[string]any, len(c)+len(f))
	keepUnmanaged(out, l, f, c, retainsOnlyFileKeys(n, f, c))
	for _, k := range sortedKeys(f) {
		cv, inC := c[k]
		v, keep, err := m.mergeField(where.field(k), l[k], f[k], cv, inC, n.Field(k))
		if err != nil {
			return nil, err
		}
		if keep {
			out[k] = v
		}
	}
	return out, nil
}

// keepUnmanaged copies the live fields the file does not set, except those
// last-applied had (the file removed them) and, under retainKeys, all of them.
func keepUnmanaged(out, l, f, c map[string]any, retainOnly bool) {
	for k, v := range c {
		if _, inF := f[k]; inF {
			continue
		}
		if _, inL := l[k]; inL || retainOnly {
			continue
		}
		out[k] = DeepCopy(v)
	}
}

// retainsOnlyFileKeys reports whether a retainKeys object drops the live
// fields the file does not set. kubectl sends $retainKeys only when the file
// sets at least one non-null field of the object, so `strategy: {}` keeps
// what live has.
func retainsOnlyFileKeys(n *schema.Node, f, c map[string]any) bool {
	if n == nil || !n.RetainKeys || c == nil {
		return false
	}
	for _, v := range f {
		if v != nil {
			return true
		}
	}
	return false
}

// replacesWhole reports whether an object is replaced rather than merged:
// x-kubernetes-map-type atomic for custom resources, patch strategy replace
// for built-in kinds (the schema sets AtomicMap by the kind's dialect). For
// the latter, kubectl's patch carries the file's map whenever live has one,
// and the server's strategic merge takes it whole (mergeMapHandler).
func (m *merger) replacesWhole(n *schema.Node) bool {
	return n != nil && n.AtomicMap
}

// checkDirectiveKeys rejects file keys that a strategic merge patch would
// read as directives instead of data.
func (m *merger) checkDirectiveKeys(where *at, f map[string]any) error {
	if !m.strategic {
		return nil
	}
	for k := range f {
		if k == "$patch" || k == "$retainKeys" ||
			strings.HasPrefix(k, "$setElementOrder/") || strings.HasPrefix(k, "$deleteFromPrimitiveList/") {
			return fieldError(File, where.field(k), ErrMalformed, "%q is a strategic merge patch directive", k)
		}
	}
	return nil
}

// mergeField merges one field the file sets. A null in the file deletes the
// field (keep is false), except that a live null stays as it is, as kubectl
// sends nothing for it.
func (m *merger) mergeField(where *at, lv, fv, cv any, inC bool, n *schema.Node) (v any, keep bool, err error) {
	if fv == nil {
		return nil, inC && cv == nil, nil
	}
	v, err = m.mergeValue(where, lv, fv, cv, inC, n)
	return v, true, err
}

// mergeValue merges a non-null file value with the live value (if inC),
// dispatching on the file value's shape, which must agree with the schema.
func (m *merger) mergeValue(where *at, lv, fv, cv any, inC bool, n *schema.Node) (any, error) {
	if err := checkShape(where, fv, n); err != nil {
		return nil, err
	}
	switch x := fv.(type) {
	case map[string]any:
		return m.mergeObject(where, asMap(lv), x, asMap(cv), n)
	case []any:
		cl, isList := asList(cv)
		return m.mergeList(where, listOrNil(lv), x, cl, inC && isList, n)
	}
	if inC && fieldpath.Equal(cv, fv) {
		return cv, nil // keep live's representation of an equal number
	}
	return fv, nil
}

// checkShape rejects a file value whose JSON kind contradicts the schema.
func checkShape(where *at, v any, n *schema.Node) error {
	s := shapeOf(v)
	if s == badShape {
		return fieldError(File, where, ErrMalformed, "%T is not JSON data", v)
	}
	want := n.TypeOf()
	switch {
	case want == schema.Unknown || s == nullShape:
		return nil
	case s == mapShape && want != schema.Object,
		s == listShape && want != schema.List,
		s == scalarShape && want != schema.Scalar:
		return fieldError(File, where, ErrTypeMismatch, "%s where the schema says %s", shapeName(s), typeName(want))
	}
	return nil
}

func shapeName(s shape) string {
	switch s {
	case mapShape:
		return "an object"
	case listShape:
		return "a list"
	}
	return "a scalar"
}

func typeName(t schema.Type) string {
	switch t {
	case schema.Object:
		return "object"
	case schema.List:
		return "list"
	}
	return "scalar"
}
