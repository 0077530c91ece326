package jsonmap

import "fmt"

// List decodes a LIST response as Object does, with its items apart:
// items are the elements of its "items" array (a null element a nil map,
// as Object gives for null) and envelope is the rest (kind, apiVersion,
// metadata). No "items", or a null one, is no items; an "items" that is
// not an array, or an element that is not an object, is an error. The
// JSON null is no envelope and no items.
//
// The whole response is decoded in one pass: decoding it into raw items
// first (encoding/json's RawMessage) would scan it twice and copy every
// item.
func List(data []byte) (envelope map[string]any, items []map[string]any, err error) {
	envelope, err = Object(data)
	if err != nil || envelope == nil {
		return nil, nil, err
	}
	raw, ok := envelope["items"]
	delete(envelope, "items")
	if !ok || raw == nil {
		return envelope, nil, nil
	}
	elems, ok := raw.([]any)
	if !ok {
		return nil, nil, fmt.Errorf("the list's items are a JSON %s, not an array", kind(raw))
	}
	items = make([]map[string]any, len(elems))
	for i, elem := range elems {
		if items[i], ok = elem.(map[string]any); !ok && elem != nil {
			return nil, nil, fmt.Errorf("item %d of the list is a JSON %s, not an object", i, kind(elem))
		}
	}
	return envelope, items, nil
}
