package diff

import "github.com/kapply/kapply/pkg/fieldpath"

// Annotations hidden by default: the last-applied records, kubectl's and
// kapply's compact one.
var hiddenAnnotations = fieldpath.RecordAnnotations

// hiddenMetadata are metadata fields every write changes. Those set at
// creation (uid, creationTimestamp) are shown, as kubectl diff shows them.
var hiddenMetadata = fieldpath.ServerMetadata(fieldpath.EveryWrite)

// hideNoise returns obj without the fields every write changes, unless
// opts.ShowManaged. obj is not modified; nil stays nil.
func hideNoise(obj map[string]any, opts Options) map[string]any {
	meta, ok := obj["metadata"].(map[string]any)
	if opts.ShowManaged || !ok {
		return obj
	}
	meta = copyMap(meta)
	for _, field := range hiddenMetadata {
		delete(meta, field)
	}
	if annotations, ok := meta["annotations"].(map[string]any); ok {
		meta["annotations"] = withoutKeys(annotations, hiddenAnnotations)
		if len(meta["annotations"].(map[string]any)) == 0 {
			delete(meta, "annotations")
		}
	}
	out := copyMap(obj)
	out["metadata"] = meta
	return out
}

func withoutKeys(m map[string]any, keys []string) map[string]any {
	out := copyMap(m)
	for _, k := range keys {
		delete(out, k)
	}
	return out
}

// copyMap copies one level; nested values are shared.
func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
