package apply_test

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/fieldpath"
)

// ExampleApplier_Adopt hands an object made imperatively over to a
// program: Adopt records the program's version as last-applied, Status
// shows who changed what since, Release gives a field away and
// SetLastApplied records a version without applying it. The objects are
// built in code: no files.
func ExampleApplier_Adopt() {
	ctx := context.Background()
	applier, err := newExampleApplier(cluster.Config)
	if err != nil {
		fmt.Println(err)
		return
	}
	ns := "ownership-example"
	nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
	if _, err := applier.Apply(ctx, apply.Input{Objects: []*unstructured.Unstructured{nsObj}}, apply.Options{}); err != nil {
		fmt.Println(err)
		return
	}
	// Someone made the ConfigMap by hand (kubectl create): it has no
	// last-applied record.
	client := dynamic.NewForConfigOrDie(cluster.Config).Resource(configMaps).Namespace(ns)
	made := configMap("web", map[string]any{"mode": "fast"})
	_ = client.Delete(ctx, "web", metav1.DeleteOptions{}) // from an earlier run (-count)
	if _, err := client.Create(ctx, made, metav1.CreateOptions{FieldManager: "kubectl-create"}); err != nil {
		fmt.Println(err)
		return
	}
	web := configMap("web", map[string]any{"mode": "fast", "replicas": "3"})
	objects := apply.Input{Objects: []*unstructured.Unstructured{web}}

	adoptions, err := applier.Adopt(ctx, objects, apply.AdoptOptions{Namespace: ns})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, a := range adoptions {
		fmt.Println(apply.ObjectRef(a.Object), "adopted:", a.Err)
		for _, c := range a.Changes {
			fmt.Println("  the next apply changes", c.Path, "to", c.New)
		}
	}
	if _, err := applier.Apply(ctx, objects, apply.Options{Write: apply.WriteOptions{Namespace: ns}}); err != nil {
		fmt.Println(err)
		return
	}
	printStatus(ctx, applier, objects, ns)

	// An autoscaler changes replicas.
	scale := []byte(`{"data":{"replicas":"5"}}`)
	if _, err := client.Patch(ctx, "web", types.MergePatchType, scale, metav1.PatchOptions{FieldManager: "scaler"}); err != nil {
		fmt.Println(err)
		return
	}
	printStatus(ctx, applier, objects, ns)

	// Hand replicas over to it: release the field, drop it from the object.
	replicas, _ := fieldpath.Parse("data.replicas")
	releases, err := applier.Release(ctx, objects, apply.ReleaseOptions{Namespace: ns, Fields: []fieldpath.Path{replicas}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(apply.ObjectRef(releases[0].Object), "released; the object still sets", releases[0].StillSet)
	unstructured.RemoveNestedField(web.Object, "data", "replicas")
	printStatus(ctx, applier, objects, ns)

	// Record a version without applying it: the live mode differs now.
	web.Object["data"] = map[string]any{"mode": "slow"}
	set, err := applier.SetLastApplied(ctx, objects, apply.SetLastAppliedOptions{Namespace: ns})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(apply.ObjectRef(set[0].Object), "record set:", set[0].Err)
	printStatus(ctx, applier, objects, ns)
	// Output:
	// configmap/web -n ownership-example adopted: <nil>
	//   the next apply changes data.replicas to 3
	// configmap/web applied, health Current
	//   owned by another: data.mode [kubectl-create]
	// configmap/web applied, health Current
	//   changed: data.replicas last applied 3 live 5 by [scaler]
	//   owned by another: data.mode [kubectl-create]
	//   owned by another: data.replicas [scaler]
	// configmap/web -n ownership-example released; the object still sets [data.replicas]
	// configmap/web applied, health Current
	//   owned by another: data.mode [kubectl-create]
	// configmap/web -n ownership-example record set: <nil>
	// configmap/web applied, health Current
	//   changed: data.mode last applied slow live fast by [kubectl-create]
	//   owned by another: data.mode [kubectl-create]
}

// printStatus prints where each object stands: fields changed since the
// last apply (the adopted ConfigMap's mode stays kubectl-create's: apply
// never wrote it).
func printStatus(ctx context.Context, applier *apply.Applier, objects apply.Input, ns string) {
	statuses, err := applier.Status(ctx, objects, apply.StatusOptions{Namespace: ns})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range statuses {
		fmt.Printf("%s %s, health %s\n", s.Object, s.State, s.Health.Status)
		for _, c := range s.Changed {
			fmt.Println("  changed:", c.Path, "last applied", c.LastApplied, "live", c.Live, "by", c.Managers)
		}
		for _, f := range s.Foreign {
			fmt.Println("  owned by another:", f.Path, f.Managers)
		}
	}
}
