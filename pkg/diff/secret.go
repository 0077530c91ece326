package diff

import (
	"encoding/base64"
	"fmt"

	"github.com/kapply/kapply/pkg/secretmask"
)

// foldStringData returns a Secret as the server stores it: every stringData
// entry written, base64-encoded, over data, and stringData gone. A client
// dry run's merged object still has the file's stringData; folding it
// compares like with like. obj is not modified.
func foldStringData(obj map[string]any) map[string]any {
	plain, ok := obj["stringData"].(map[string]any)
	if !ok {
		return obj
	}
	data := map[string]any{}
	if existing, ok := obj["data"].(map[string]any); ok {
		data = copyMap(existing)
	}
	for k, v := range plain {
		data[k] = base64.StdEncoding.EncodeToString([]byte(fmt.Sprint(v)))
	}
	out := copyMap(obj)
	delete(out, "stringData")
	out["data"] = data
	return out
}

// MaskSecret returns obj with a v1 Secret's values masked as "***": data,
// stringData, and the last-applied annotations, which may copy them. For
// commands that print whole objects (apply -o yaml|json, export); other
// objects are returned as they are. obj is not modified.
func MaskSecret(obj map[string]any) map[string]any {
	if !secretmask.IsSecret(obj) {
		return obj
	}
	masked, _ := maskSecret(obj, nil)
	return masked
}
