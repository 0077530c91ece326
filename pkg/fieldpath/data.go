package fieldpath

import (
	"errors"
	"fmt"
)

// ErrFieldNotFound reports a path that names nothing in the object.
var ErrFieldNotFound = errors.New("field not found")

// Lookup returns the value at the path in obj.
func (fp Path) Lookup(obj map[string]any) (any, error) {
	var cur any = obj
	for i, s := range fp {
		next, _, err := s.child(cur)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", fp[:i+1], err)
		}
		cur = next
	}
	return cur, nil
}

// Remove deletes the field or element at the path from obj, then the maps
// and lists the removal left empty: an empty map left in a last-applied
// record would make the next apply delete every live entry of it.
func (fp Path) Remove(obj map[string]any) error {
	if len(fp) == 0 {
		return fmt.Errorf("removing the whole object: %w", ErrInvalid)
	}
	_, err := fp.removeAt(obj, 0)
	return err
}

// removeAt returns cur without the path from step i on.
func (fp Path) removeAt(cur any, i int) (any, error) {
	child, idx, err := fp[i].child(cur)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", fp[:i+1], err)
	}
	keep := false
	if i < len(fp)-1 {
		if child, err = fp.removeAt(child, i+1); err != nil {
			return nil, err
		}
		keep = !isEmpty(child)
	}
	switch c := cur.(type) {
	case map[string]any:
		if keep {
			c[fp[i].Field] = child
		} else {
			delete(c, fp[i].Field)
		}
		return c, nil
	case []any:
		if keep {
			c[idx] = child
			return c, nil
		}
		return append(c[:idx], c[idx+1:]...), nil
	}
	return cur, nil
}

func isEmpty(v any) bool {
	switch c := v.(type) {
	case map[string]any:
		return len(c) == 0
	case []any:
		return len(c) == 0
	}
	return false
}

// child returns the value a step selects under cur and, for a list
// element, its index.
func (s Element) child(cur any) (any, int, error) {
	switch {
	case s.IsField():
		return s.field(cur)
	case s.IsIndex():
		return s.index(cur)
	}
	list, ok := cur.([]any)
	if !ok {
		return nil, 0, fmt.Errorf("the parent is not a list, so %s selects nothing: %w", s.text(false), ErrFieldNotFound)
	}
	found := -1
	for i, elem := range list {
		if !s.Matches(elem) {
			continue
		}
		if found >= 0 {
			return nil, 0, fmt.Errorf("several list elements match; name more keys: %w", ErrInvalid)
		}
		found = i
	}
	if found < 0 {
		return nil, 0, fmt.Errorf("no list element matches: %w", ErrFieldNotFound)
	}
	return list[found], found, nil
}

func (s Element) field(cur any) (any, int, error) {
	m, ok := cur.(map[string]any)
	if !ok {
		if _, isList := cur.([]any); isList {
			return nil, 0, fmt.Errorf("the parent is a list: select an element with [key=value] before .%s: %w", s.Field, ErrFieldNotFound)
		}
		return nil, 0, fmt.Errorf("the parent is not an object: %w", ErrFieldNotFound)
	}
	v, ok := m[s.Field]
	if !ok {
		return nil, 0, ErrFieldNotFound
	}
	return v, 0, nil
}

// Matches reports whether a list element is the one s selects: by value
// or by every key field, compared as text (ScalarText).
func (s Element) Matches(elem any) bool {
	if s.IsValue() {
		return ScalarText(elem) == ScalarText(s.Value)
	}
	m, ok := elem.(map[string]any)
	if !ok {
		return false
	}
	for _, k := range s.Keys {
		v, ok := m[k.Name]
		if !ok || ScalarText(v) != ScalarText(k.Value) {
			return false
		}
	}
	return true
}

func (s Element) index(cur any) (any, int, error) {
	list, ok := cur.([]any)
	if !ok || s.Index < 0 || s.Index >= len(list) {
		return nil, 0, fmt.Errorf("no element at %s: %w", s.text(false), ErrFieldNotFound)
	}
	return list[s.Index], s.Index, nil
}
