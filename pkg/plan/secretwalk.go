package plan

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	sigsjson "sigs.k8s.io/json"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/secretmask"
)

// Where a Secret's values sit in an item: the values of data and
// stringData, and the last-applied records, which may copy them (kubectl
// records values plainly). Redaction and restoration walk the same
// places, so a value Encode hides is one Restore can put back.

// secretLeaves is what is done at each place: to a value of field.key,
// and to a record annotation's text.
type secretLeaves interface {
	value(field, key string, v any) (any, error)
	record(annotation string, v any) (any, error)
}

// walkSecret returns v, found at the field path in a Secret, with leaves
// applied at each place under it; v is not modified.
func walkSecret(l secretLeaves, path []string, v any) (any, error) {
	m, isMap := v.(map[string]any)
	switch {
	case len(path) == 0:
		if !isMap {
			return l.value("", "", v) // not an object: hide it whole
		}
		return walkEach(m, func(k string, item any) (any, error) { return walkSecret(l, []string{k}, item) })
	case slices.Contains(secretmask.Fields(), path[0]):
		return walkValues(l, path, v)
	case path[0] != "metadata":
		return v, nil
	case len(path) == 1 && isMap:
		return walkEach(m, func(k string, item any) (any, error) { return walkSecret(l, []string{"metadata", k}, item) })
	case path[1] != "annotations":
		return v, nil
	case len(path) == 2 && isMap:
		return walkEach(m, func(k string, item any) (any, error) {
			return walkSecret(l, []string{"metadata", "annotations", k}, item)
		})
	case len(path) == 3 && slices.Contains(recordAnnotations, path[2]):
		return l.record(path[2], v)
	}
	return v, nil
}

// walkValues handles data or stringData (path[0]) and what is under it.
// A strategic merge patch's directives in the map stay: their values are
// key names, not values, and a Secret's key cannot start with "$".
func walkValues(l secretLeaves, path []string, v any) (any, error) {
	if len(path) > 1 {
		return l.value(path[0], path[1], v)
	}
	m, isMap := v.(map[string]any)
	if !isMap {
		if v == nil {
			return nil, nil
		}
		return l.value(path[0], "", v)
	}
	return walkEach(m, func(k string, item any) (any, error) {
		if isDirective(k, item) {
			return item, nil
		}
		return l.value(path[0], k, item)
	})
}

// isDirective reports a strategic merge patch directive as kapply's
// patches carry them in a map.
func isDirective(key string, v any) bool {
	switch key {
	case "$patch":
		return v == "replace" || v == "delete" || v == "merge"
	case "$retainKeys":
		return true
	}
	return false
}

func walkEach(m map[string]any, f func(k string, v any) (any, error)) (map[string]any, error) {
	out := make(map[string]any, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v, err := f(k, m[k])
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

// walkObject applies leaves to a Secret object (nil stays nil).
func walkObject(l secretLeaves, obj map[string]any) (map[string]any, error) {
	if obj == nil {
		return nil, nil
	}
	out, err := walkSecret(l, nil, obj)
	if err != nil {
		return nil, err
	}
	return out.(map[string]any), nil
}

// walkPatch applies leaves to a patch body: a JSON patch op by op (its
// path says where its value goes), any other as an object.
func walkPatch(l secretLeaves, p Patch) (Patch, error) {
	if len(p.Data) == 0 {
		return p, nil
	}
	var body any
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(p.Data, &body); err != nil {
		return Patch{}, fmt.Errorf("reading the patch: %w", err)
	}
	var err error
	if p.Type == JSONPatch {
		body, err = walkJSONPatch(l, body)
	} else {
		body, err = walkSecret(l, nil, body)
	}
	if err != nil {
		return Patch{}, err
	}
	data, err := json.Marshal(body)
	if err != nil {
		return Patch{}, fmt.Errorf("encoding the patch: %w", err)
	}
	return Patch{Type: p.Type, Data: data}, nil
}

func walkJSONPatch(l secretLeaves, body any) (any, error) {
	ops, ok := body.([]any)
	if !ok {
		return l.value("", "", body) // not a JSON patch: hide it whole
	}
	out := make([]any, len(ops))
	for i, op := range ops {
		m, ok := op.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("operation %d of the JSON patch is not an object", i+1)
		}
		pointer, _ := m["path"].(string)
		v, has := m["value"]
		if !has {
			out[i] = m
			continue
		}
		walked, err := walkSecret(l, pointerFields(pointer), v)
		if err != nil {
			return nil, err
		}
		copied := maps.Clone(m)
		copied["value"] = walked
		out[i] = copied
	}
	return out, nil
}

// pointerFields splits a JSON pointer (RFC 6901) into its tokens.
func pointerFields(pointer string) []string {
	if pointer == "" {
		return nil
	}
	tokens := strings.Split(strings.TrimPrefix(pointer, "/"), "/")
	for i, t := range tokens {
		tokens[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return tokens
}

// secretPath is the part of a change's path walkSecret reads, and its
// fields: a path under data or stringData is cut after the key (deeper
// steps, or a step by value, could quote the value itself).
func secretPath(p fieldpath.Path) (fieldpath.Path, []string) {
	var fields []string
	for i, e := range p {
		underValues := len(fields) > 0 && slices.Contains(secretmask.Fields(), fields[0])
		if underValues && (len(fields) == 2 || !e.IsField()) {
			return p[:i], fields
		}
		if !e.IsField() {
			return p, fields
		}
		fields = append(fields, e.Field)
	}
	return p, fields
}
