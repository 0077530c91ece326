package apply_test

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/apply/prune"
)

// ExampleApplier_Prune prunes for a program that writes its objects
// itself: it labels them as members of the ApplySet "app" (its parent a
// Secret), creates them with its own client, and later, declaring only
// one of them, asks the Applier to delete the rest.
func ExampleApplier_Prune() {
	ctx := context.Background()
	applier, err := newExampleApplier(cluster.Config)
	if err != nil {
		fmt.Println(err)
		return
	}
	ns := "example-prune"
	nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
	if _, err := applier.Apply(ctx, apply.Input{Objects: []*unstructured.Unstructured{nsObj}}, apply.Options{}); err != nil {
		fmt.Println(err)
		return
	}
	client := dynamic.NewForConfigOrDie(cluster.Config).Resource(configMaps).Namespace(ns)
	id := prune.SetID(k8sschema.GroupKind{Kind: "Secret"}, "app", ns)
	var written []*unstructured.Unstructured
	for _, name := range []string{"kept", "dropped"} {
		cm := configMap(name, map[string]any{"k": "v"})
		cm.SetLabels(map[string]string{prune.PartOfLabel: id})
		_ = client.Delete(ctx, name, metav1.DeleteOptions{}) // from an earlier run (-count)
		made, err := client.Create(ctx, cm, metav1.CreateOptions{FieldManager: "my-program"})
		if err != nil {
			fmt.Println(err)
			return
		}
		written = append(written, made)
	}
	opts := apply.PruneOptions{Options: prune.Options{ApplySet: "app"}, Namespace: ns}
	// The first prune records the members on the parent; nothing goes.
	if _, err := applier.Prune(ctx, apply.Input{Objects: written}, opts); err != nil {
		fmt.Println(err)
		return
	}
	events, err := applier.Prune(ctx, apply.Input{Objects: written[:1]}, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, ev := range events {
		fmt.Println(apply.ObjectRef(ev.Object), ev.Outcome, ev.Err)
	}
	// Output:
	// configmap/dropped -n example-prune pruned <nil>
}
