package merge_test

import (
	"fmt"

	"github.com/kapply/kapply/pkg/merge"
	"github.com/kapply/kapply/pkg/schema"
)

func Example() {
	scalar := &schema.Node{Type: schema.Scalar}
	item := &schema.Node{Type: schema.Object, Fields: map[string]*schema.Node{"name": scalar, "size": scalar}}
	kind := &schema.Kind{Root: &schema.Node{Type: schema.Object, Fields: map[string]*schema.Node{
		"metadata": {Type: schema.Object, Fields: map[string]*schema.Node{"resourceVersion": scalar}},
		"spec": {Type: schema.Object, Fields: map[string]*schema.Node{
			"items": {Type: schema.List, List: schema.Map, Keys: []string{"name"}, Elem: item},
		}},
	}}}
	lastApplied := map[string]any{"spec": map[string]any{"items": []any{
		map[string]any{"name": "a", "size": int64(1)},
		map[string]any{"name": "b"},
	}}}
	file := map[string]any{"spec": map[string]any{"items": []any{
		map[string]any{"name": "a", "size": int64(2)},
	}}}
	live := map[string]any{
		"metadata": map[string]any{"resourceVersion": "7"},
		"spec": map[string]any{"items": []any{
			map[string]any{"name": "a", "size": int64(1)},
			map[string]any{"name": "b"},
			map[string]any{"name": "added-by-a-controller"},
		}},
	}
	plan, err := merge.ThreeWay(lastApplied, file, live, kind)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range plan.Changes {
		fmt.Printf("%s: %v -> %v (%s)\n", c.Path, c.Old, c.New, c.Reason)
	}
	fmt.Printf("%s %s\n", plan.Patch.Type, plan.Patch.Data)
	// Output:
	// metadata: map[resourceVersion:7] -> map[resourceVersion:7] (kept: not managed by the file)
	// spec.items[name=a].size: 1 -> 2 (set by file)
	// spec.items[name=added-by-a-controller]: map[name:added-by-a-controller] -> map[name:added-by-a-controller] (kept: not managed by the file)
	// spec.items[name=b].name: b -> <nil> (removed from file)
	// application/merge-patch+json {"metadata":{"resourceVersion":"7"},"spec":{"items":[{"name":"a","size":2},{"name":"added-by-a-controller"}]}}
}
