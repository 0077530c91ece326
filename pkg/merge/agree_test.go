package merge

import (
	"fmt"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/kapply/kapply/pkg/schema"
)

// TestSchemaAgreesWithGoTypes checks, for every field of every kind served
// from Go types, that the strategy pkg/schema reads from the OpenAPI
// document is the one the server's strategic merge reads from the Go struct
// tags: patch strategy and merge key of lists, retainKeys and replace of
// objects, and that the Go type has the field at all. The differential
// tests use the Go types as the oracle; this makes the two sources agree
// everywhere, not only where generated triples went.
func TestSchemaAgreesWithGoTypes(t *testing.T) {
	fields := 0
	for _, k := range allKinds(t).all {
		if k.meta == nil {
			continue
		}
		w := &agreeWalk{seen: map[agreeKey]bool{}}
		w.object(k.kind.Root, k.meta, "")
		fields += w.fields
		for _, p := range w.problems {
			t.Errorf("%s: %s", k.name, p)
		}
	}
	t.Logf("%d fields compared", fields)
}

type agreeKey struct {
	n    *schema.Node
	meta string
}

type agreeWalk struct {
	seen     map[agreeKey]bool
	problems []string
	fields   int
}

func (w *agreeWalk) report(path, format string, args ...any) {
	w.problems = append(w.problems, path+": "+fmt.Sprintf(format, args...))
}

// object compares the fields of a struct-like node with its Go struct.
func (w *agreeWalk) object(n *schema.Node, meta strategicpatch.LookupPatchMeta, path string) {
	k := agreeKey{n, fmt.Sprint(meta)}
	if n == nil || len(n.Fields) == 0 || w.seen[k] {
		return
	}
	w.seen[k] = true
	for _, name := range sortedNodeKeys(n.Fields) {
		w.field(n.Fields[name], meta, name, path+"."+name)
	}
}

func (w *agreeWalk) field(n *schema.Node, meta strategicpatch.LookupPatchMeta, name, path string) {
	w.fields++
	if n.TypeOf() == schema.List {
		w.list(n, meta, name, path)
		return
	}
	sub, pm, err := meta.LookupPatchMetadataForStruct(name)
	if err != nil {
		w.report(path, "no Go field: %v", err)
		return
	}
	strategies := pm.GetPatchStrategies()
	if n.TypeOf() == schema.Object {
		if got, want := n.AtomicMap, slices.Contains(strategies, "replace"); got != want {
			w.report(path, "AtomicMap %v, Go patch strategy %v", got, strategies)
		}
		if got, want := n.RetainKeys, slices.Contains(strategies, "retainKeys"); got != want {
			w.report(path, "RetainKeys %v, Go patch strategy %v", got, strategies)
		}
		w.object(n, sub, path)
	}
}

func (w *agreeWalk) list(n *schema.Node, meta strategicpatch.LookupPatchMeta, name, path string) {
	sub, pm, err := meta.LookupPatchMetadataForSlice(name)
	if err != nil {
		w.report(path, "no Go slice: %v", err)
		return
	}
	strategies := pm.GetPatchStrategies()
	merge := slices.Contains(strategies, "merge")
	lt, keys := n.ListStrategy()
	var want schema.ListType
	switch {
	case merge && pm.GetPatchMergeKey() != "":
		want = schema.Map
	case merge:
		want = schema.Set
	}
	if lt != want || (want == schema.Map && !slices.Equal(keys, []string{pm.GetPatchMergeKey()})) {
		w.report(path, "list %v keys %v, Go patch strategy %v merge key %q", lt, keys, strategies, pm.GetPatchMergeKey())
	}
	if got, want := n.Item().TypeOf() == schema.Object && n.Item().RetainKeys, slices.Contains(strategies, "retainKeys"); got != want {
		w.report(path, "items RetainKeys %v, Go patch strategy %v", got, strategies)
	}
	if lt == schema.Map {
		w.object(n.Item(), sub, path+"[]")
	}
}
