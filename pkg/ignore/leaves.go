package ignore

import (
	"slices"

	"github.com/kapply/kapply/pkg/fieldpath"
)

// noiseMetadata are the metadata fields every write changes; diff hides
// them, so they are not classified.
var noiseMetadata = []string{"managedFields", "resourceVersion", "generation", "uid", "creationTimestamp"}

// recordAnnotations are the last-applied records, which every apply
// rewrites.
var recordAnnotations = []string{"kubectl.kubernetes.io/last-applied-configuration", "kapply.dev/last-applied-compact"}

// listKeys are the fields that key the elements of the lists most
// objects hold (containers, env, volumes by name; ports by number).
// The schema is not at hand where a diff's sides are compared, so a list
// is keyed by the first of these every element holds with distinct
// values — the names managedFields use for those lists, so that the
// owners of a path can be read — and is otherwise one atomic value.
var listKeys = []string{"name", "containerPort", "port", "mountPath", "devicePath", "type", "key", "ip"}

// changedLeaves are the paths of the leaves that differ between a and b.
func changedLeaves(a, b map[string]any) []fieldpath.Path {
	var out []fieldpath.Path
	walkMaps(nil, a, b, &out)
	return out
}

func walkMaps(at fieldpath.Path, a, b map[string]any, out *[]fieldpath.Path) {
	fieldpath.EachField(at, a, b, func(p fieldpath.Path, av, bv any) {
		if !isNoise(p) {
			walk(p, av, bv, out)
		}
	})
}

func walk(p fieldpath.Path, a, b any, out *[]fieldpath.Path) {
	if fieldpath.Equal(a, b) {
		return
	}
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok || aok && b == nil || a == nil && bok {
		walkMaps(p, am, bm, out)
		return
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	// A keyed list one side lacks is walked too: a new ports list holds
	// the file's containerPort and the server's default protocol.
	if key := listKey(al, bl); (aok || a == nil) && (bok || b == nil) && key != "" {
		walkKeyed(p, key, al, bl, out)
		return
	}
	*out = append(*out, p)
}

// walkKeyed compares two lists element by element, by key.
func walkKeyed(p fieldpath.Path, key string, a, b []any, out *[]fieldpath.Path) {
	elems := map[string][2]any{}
	var order []string
	for side, list := range [][]any{a, b} {
		for _, e := range list {
			k := fieldpath.ScalarText(e.(map[string]any)[key])
			pair, seen := elems[k]
			if !seen {
				order = append(order, k)
			}
			pair[side] = e
			elems[k] = pair
		}
	}
	for _, k := range order {
		pair := elems[k]
		elem := pair[0]
		if elem == nil {
			elem = pair[1]
		}
		ep := p.Child(fieldpath.KeyOf(elem.(map[string]any), []string{key}))
		walk(ep, pair[0], pair[1], out)
	}
}

// listKey is the first of listKeys that keys both lists, "" for none.
func listKey(a, b []any) string {
	if len(a)+len(b) == 0 {
		return ""
	}
	for _, key := range listKeys {
		if keys(a, key) && keys(b, key) {
			return key
		}
	}
	return ""
}

// keys reports whether every element of list is a map holding key, with
// distinct scalar values.
func keys(list []any, key string) bool {
	seen := map[string]bool{}
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return false
		}
		v, ok := m[key]
		text := fieldpath.ScalarText(v)
		if !ok || text == "\x00" || seen[text] {
			return false
		}
		seen[text] = true
	}
	return true
}

func isNoise(p fieldpath.Path) bool {
	if len(p) < 2 || p[0].Field != "metadata" {
		return false
	}
	if len(p) == 2 && slices.Contains(noiseMetadata, p[1].Field) {
		return true
	}
	return len(p) == 3 && p[1].Field == "annotations" && slices.Contains(recordAnnotations, p[2].Field)
}
