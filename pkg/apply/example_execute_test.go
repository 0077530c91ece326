package apply_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/plan"
)

// ExampleApplier_Execute executes a plan read back from its JSON document,
// given only the objects it was made from: each item is planned again from
// them against the live object and must come out as saved. A doctored
// document — re-encoded, so its checksum is right — holding an object no
// file declares is refused whole, before anything is written.
func ExampleApplier_Execute() {
	applier, err := newExampleApplier(cluster.Config)
	if err != nil {
		fmt.Println(err)
		return
	}
	files := func() []*unstructured.Unstructured {
		return []*unstructured.Unstructured{
			{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "example-execute"}}},
			{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": "settings", "namespace": "example-execute"},
				"data":     map[string]any{"mode": "fast"}}},
		}
	}
	ctx := context.Background()
	p, err := applier.Plan(ctx, apply.Input{Objects: files()}, apply.PlanOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	var saved bytes.Buffer
	if err := plan.Encode(&saved, p); err != nil {
		fmt.Println(err)
		return
	}
	document := saved.Bytes()

	doctored, err := plan.Decode(bytes.NewReader(document))
	if err != nil {
		fmt.Println(err)
		return
	}
	extra := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "extra", "namespace": "example-execute"}}}
	doctored.Items = append(doctored.Items, plan.NewCreate(extra, plan.Source{}))
	_, err = applier.Execute(ctx, doctored, apply.ExecuteOptions{Objects: apply.Input{Objects: files()}})
	var tampered *apply.TamperedError
	if errors.As(err, &tampered) {
		for _, it := range tampered.Items {
			fmt.Println("refused:", it.ID, "-", it.Reason[:len("no file declares it")])
		}
	}

	approved, err := plan.Decode(bytes.NewReader(document))
	if err != nil {
		fmt.Println(err)
		return
	}
	events, err := applier.Execute(ctx, approved, apply.ExecuteOptions{Objects: apply.Input{Objects: files()}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, ev := range events {
		fmt.Println("execute:", apply.ObjectRef(ev.Object), ev.Outcome, ev.Err)
	}
	// Output:
	// refused: ConfigMap/extra -n example-execute - no file declares it
	// execute: namespace/example-execute created <nil>
	// execute: configmap/settings -n example-execute created <nil>
}
