package apply_test

import (
	"bytes"
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/plan"
)

// ExampleApplier_Plan plans objects, saves the plan as a document (what a
// reviewer approves), reads it back and executes it: each item is checked
// against the live object and written only if nothing it depends on
// changed since. A second plan then finds nothing to do.
func ExampleApplier_Plan() {
	applier, err := newExampleApplier(cluster.Config)
	if err != nil {
		fmt.Println(err)
		return
	}
	objects := []*unstructured.Unstructured{
		{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "settings", "namespace": "example-plan"},
			"data":     map[string]any{"mode": "fast"}}},
		{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "example-plan"}}},
	}
	ctx := context.Background()
	p, err := applier.Plan(ctx, apply.Input{Objects: objects}, apply.PlanOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	var saved bytes.Buffer
	if err := plan.Encode(&saved, p); err != nil {
		fmt.Println(err)
		return
	}
	approved, err := plan.Decode(&saved)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, it := range approved.Items {
		fmt.Println("plan:", it.ID, it.Action)
	}
	events, err := applier.Execute(ctx, approved, apply.ExecuteOptions{Objects: apply.Input{Objects: objects}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, ev := range events {
		fmt.Println("execute:", apply.ObjectRef(ev.Object), ev.Outcome, ev.Err)
	}
	again, err := applier.Plan(ctx, apply.Input{Objects: objects}, apply.PlanOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, it := range again.Items {
		fmt.Println("plan again:", it.ID, it.Action)
	}
	// Output:
	// plan: Namespace/example-plan create
	// plan: ConfigMap/settings -n example-plan create
	// execute: namespace/example-plan created <nil>
	// execute: configmap/settings -n example-plan created <nil>
	// plan again: Namespace/example-plan unchanged
	// plan again: ConfigMap/settings -n example-plan unchanged
}
