package ignore

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/go-openapi/jsonpointer"

	"github.com/kapply/kapply/pkg/fieldpath"
)

// Managed answers, from a live object's managedFields, which fields a
// manager owns; pkg/ownership's *Ownership is one.
type Managed interface {
	FieldsOf(manager string) []fieldpath.Path
}

// parsePointer splits a JSON pointer (RFC 6901) into its unescaped
// tokens. The empty pointer (the whole object) names no field a rule
// could ignore: it is refused with the pointers that lack the leading /.
func parsePointer(p string) ([]string, error) {
	pointer, err := jsonpointer.New(p)
	if err != nil || pointer.IsEmpty() {
		return nil, fmt.Errorf("JSON pointer %q must start with /", p)
	}
	return pointer.DecodedTokens(), nil
}

// pointerPath is the path a JSON pointer names in obj: a token under a
// list is a position. ok is false when obj lacks the field.
func pointerPath(pointer string, obj map[string]any) (fieldpath.Path, bool) {
	tokens, err := parsePointer(pointer)
	if err != nil {
		return nil, false
	}
	var cur any = obj
	out := make(fieldpath.Path, 0, len(tokens))
	for _, t := range tokens {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[t]
			if !ok {
				return nil, false
			}
			out, cur = append(out, fieldpath.Field(t)), v
		case []any:
			i, err := strconv.Atoi(t)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			out, cur = append(out, fieldpath.Index(i)), c[i]
		default:
			return nil, false
		}
	}
	return out, len(out) > 0
}

// jqPath converts a path jq printed (strings and integers).
func jqPath(steps []any) (fieldpath.Path, bool) {
	out := make(fieldpath.Path, 0, len(steps))
	for _, s := range steps {
		switch x := s.(type) {
		case string:
			out = append(out, fieldpath.Field(x))
		case int:
			out = append(out, fieldpath.Index(x))
		case float64:
			out = append(out, fieldpath.Index(int(x)))
		default:
			return nil, false
		}
	}
	return out, len(out) > 0
}

// exists reports whether obj holds the path.
func exists(p fieldpath.Path, obj map[string]any) bool {
	_, err := p.Lookup(obj)
	return err == nil
}

// pathsIn are the fields of obj the rule names, each once.
func (r *Rule) pathsIn(obj map[string]any, managed Managed) []fieldpath.Path {
	out, _ := r.pathsInTimed(obj, managed)
	return out
}

// pathsInTimed is pathsIn, and an error when a jq expression ran out of
// its time on obj: its answer is unknown, which a diff can show (the
// field stays) but apply --respect-ignore must not take for "no field".
func (r *Rule) pathsInTimed(obj map[string]any, managed Managed) ([]fieldpath.Path, error) {
	if obj == nil {
		return nil, nil
	}
	var timedOut error
	var out []fieldpath.Path
	for _, p := range r.JSONPointers {
		if fp, ok := pointerPath(p, obj); ok {
			out = append(out, fp)
		}
	}
	for _, code := range r.jq {
		if r.timedOut.Load() {
			timedOut = r.TimeoutError()
			break
		}
		// A runtime error (iterating over a field the object lacks) is
		// no match, as in Argo CD: a rule scoped to every kind meets
		// objects without the field.
		found, err := runJQ(code, obj, r.budget)
		if errors.Is(err, context.DeadlineExceeded) {
			r.timedOut.Store(true)
			timedOut = r.TimeoutError()
		}
		out = append(out, found...)
	}
	if managed != nil {
		for _, m := range r.ManagedFieldsManagers {
			for _, fp := range managed.FieldsOf(m) {
				if exists(fp, obj) {
					out = append(out, fp)
				}
			}
		}
	}
	return dedupe(out), timedOut
}

// TimeoutError says that the rule's jq ran out of time.
func (r *Rule) TimeoutError() error {
	return fmt.Errorf("ignore rule %s: a jq expression ran out of the run's %s for jq", r.Origin, jqTimeout)
}

func dedupe(paths []fieldpath.Path) []fieldpath.Path {
	seen := map[string]bool{}
	out := paths[:0]
	for _, p := range paths {
		if s := p.String(); !seen[s] {
			seen[s] = true
			out = append(out, p)
		}
	}
	return out
}

// removeAll removes paths from obj, in an order that keeps the others
// valid: later list positions first, and a keyed element's key fields
// last (the element is found by them).
func removeAll(obj map[string]any, paths []fieldpath.Path) int {
	sortForRemoval(paths)
	removed := 0
	for _, p := range paths {
		// An error is a field gone with its parent, or several elements
		// matching a key: left, as a rule never removes what it did
		// not name.
		if p.Remove(obj) == nil {
			removed++
		}
	}
	return removed
}
