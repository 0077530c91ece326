package plan

import (
	"encoding/json"
	"fmt"

	sigsjson "sigs.k8s.io/json"
)

// WithResourceVersion returns the patch carrying rv as its precondition:
// the server refuses it with a conflict if the object's resourceVersion
// is no longer rv. An object body (strategic, merge, apply) gets
// metadata.resourceVersion; a JSON patch a leading test operation. An
// empty rv (a server-side apply that creates) leaves the patch as it is.
func (p Patch) WithResourceVersion(rv string) (Patch, error) {
	if rv == "" || len(p.Data) == 0 {
		return p, nil
	}
	var body any
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(p.Data, &body); err != nil {
		return Patch{}, fmt.Errorf("reading the patch: %w", err)
	}
	switch b := body.(type) {
	case []any:
		test := map[string]any{"op": "test", "path": "/metadata/resourceVersion", "value": rv}
		body = append([]any{test}, b...)
	case map[string]any:
		metadata, isMap := b["metadata"].(map[string]any)
		if !isMap && b["metadata"] != nil {
			return Patch{}, fmt.Errorf("the patch's metadata is not an object")
		}
		if metadata == nil {
			metadata = map[string]any{}
			b["metadata"] = metadata
		}
		metadata["resourceVersion"] = rv
	default:
		return Patch{}, fmt.Errorf("the patch is neither an object nor a list of operations")
	}
	data, err := json.Marshal(body)
	if err != nil {
		return Patch{}, fmt.Errorf("encoding the patch: %w", err)
	}
	return Patch{Type: p.Type, Data: data}, nil
}
