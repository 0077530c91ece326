package plan_test

import (
	"bytes"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/merge"
	"github.com/kapply/kapply/pkg/plan"
)

// A plan is made from the engine's merge, saved as a document, read back
// and verified against the object as it is when it runs: a status update
// since the plan moves the resourceVersion the write carries; a change to
// a field the plan writes refuses it.
func ExampleEncode() {
	live := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "cfg", "namespace": "prod", "uid": "u-1", "resourceVersion": "7"},
		"data":     map[string]any{"mode": "slow"}}}
	file := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "cfg", "namespace": "prod"},
		"data":     map[string]any{"mode": "fast"}}}
	mp, err := merge.ThreeWay(nil, file.Object, live.Object, nil)
	if err != nil {
		panic(err)
	}
	p := &plan.Plan{Cluster: plan.Cluster{Server: "https://10.0.0.1:6443", ID: "kube-system-uid"},
		Items: []plan.Item{plan.FromMerge(file, live, plan.Source{File: "cfg.yaml", Index: 1, Line: 1}, mp, nil)}}

	var saved bytes.Buffer
	if err := plan.Encode(&saved, p); err != nil {
		panic(err)
	}
	loaded, err := plan.Decode(&saved)
	if err != nil {
		panic(err)
	}
	it := loaded.Items[0]
	fmt.Println(it.Action, it.ID, "from", it.Source.File)
	for _, c := range it.Changes {
		if c.Reason == plan.KeptUnmanaged {
			continue // live-only fields the file leaves alone
		}
		fmt.Printf("  %s: %v -> %v (%s)\n", c.Path, c.Old, c.New, c.Reason.Explain())
	}

	relabelled := live.DeepCopy()
	relabelled.SetLabels(map[string]string{"team": "a"})
	relabelled.SetResourceVersion("8")
	rv, err := it.Verify(relabelled)
	fmt.Println("labels changed since:", rv, err)

	edited := live.DeepCopy()
	edited.Object["data"] = map[string]any{"mode": "paused"}
	edited.SetResourceVersion("9")
	_, err = it.Verify(edited)
	fmt.Println("data changed since:", err)
	// Output:
	// patch ConfigMap/cfg -n prod from cfg.yaml
	//   data.mode: slow -> fast (set by file)
	// labels changed since: 8 <nil>
	// data changed since: ConfigMap/cfg -n prod changed since the plan: data.mode
}
