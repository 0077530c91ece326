package ignore

import "github.com/kapply/kapply/pkg/fieldpath"

// setPath sets the field at p of obj to v, making the maps and list
// elements on the way: a position past a list's end appends, a keyed
// element that is missing is added with its key fields. It reports
// whether it could (false where obj holds a scalar on the way).
// fieldpath has no setter: the engine never writes by path.
func setPath(obj map[string]any, p fieldpath.Path, v any) bool {
	if len(p) == 0 {
		return false
	}
	next, ok := setIn(obj, p, v)
	return ok && next != nil
}

// setIn returns cur (or a new container in its place) with p set to v.
func setIn(cur any, p fieldpath.Path, v any) (any, bool) {
	if len(p) == 0 {
		return v, true
	}
	e := p[0]
	if e.IsField() {
		m, ok := cur.(map[string]any)
		if cur == nil {
			m, ok = map[string]any{}, true
		}
		if !ok {
			return cur, false
		}
		child, ok := setIn(m[e.Field], p[1:], v)
		if ok {
			m[e.Field] = child
		}
		return m, ok
	}
	list, ok := cur.([]any)
	if cur != nil && !ok {
		return cur, false
	}
	i := elementIndex(list, e)
	if i == len(list) {
		list = append(list, newElement(e))
	}
	child, ok := setIn(list[i], p[1:], v)
	if ok {
		list[i] = child
	}
	return list, ok
}

// elementIndex is the position e selects in list, len(list) when none.
func elementIndex(list []any, e fieldpath.Element) int {
	if e.IsIndex() {
		return min(max(e.Index, 0), len(list))
	}
	for i, elem := range list {
		if e.Matches(elem) {
			return i
		}
	}
	return len(list)
}

// newElement is the list element e would select, before it is set.
func newElement(e fieldpath.Element) any {
	switch {
	case e.IsKey():
		m := map[string]any{}
		for _, kv := range e.Keys {
			m[kv.Name] = kv.Value
		}
		return m
	case e.IsValue():
		return e.Value
	}
	return nil
}
