package diff

import (
	"encoding/base64"
	"fmt"
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
