package apply_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/apply/prune"
	"github.com/kapply/kapply/pkg/history"
)

// ExampleApplier_History applies a ConfigMap twice with the ApplySet
// "web" and history on, then lists the set's revisions: who applied, why,
// what changed, and the configuration each sent.
func ExampleApplier_History() {
	ctx := context.Background()
	applier, err := newExampleApplier(cluster.Config)
	if err != nil {
		fmt.Println(err)
		return
	}
	ns := fmt.Sprintf("example-history-%d", rand.IntN(1_000_000)) // a set of its own on each run (-count)
	nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
	if _, err := applier.Apply(ctx, apply.Input{Objects: []*unstructured.Unstructured{nsObj}}, apply.Options{}); err != nil {
		fmt.Println(err)
		return
	}
	for _, version := range []string{"1.0", "1.1"} {
		opts := apply.Options{Write: apply.WriteOptions{Namespace: ns},
			Prune: &prune.Options{ApplySet: "web", History: &history.Options{Limit: history.DefaultLimit, ChangeCause: "release " + version}}}
		if _, err := applier.Apply(ctx, apply.Input{Objects: []*unstructured.Unstructured{configMap("web", map[string]any{"version": version})}}, opts); err != nil {
			fmt.Println(err)
			return
		}
	}
	revs, err := applier.History(ctx, apply.ApplySetRef{ApplySet: "web", Namespace: ns})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range revs {
		data := r.Members[0]["data"].(map[string]any)
		fmt.Printf("%d %q complete=%t %s version=%v\n", r.Number, r.ChangeCause, r.Complete, r.Counts, data["version"])
	}
	// Output:
	// 1 "release 1.0" complete=true 1 members (+1 ~0 -0) version=1.0
	// 2 "release 1.1" complete=true 1 members (+0 ~1 -0) version=1.1
}

// ExampleApplier_Rollback applies two versions of a ConfigMap with the
// ApplySet "web", plans the way back to the first (Rollback), and
// executes the plan (Execute), which records it as a third revision.
func ExampleApplier_Rollback() {
	ctx := context.Background()
	applier, err := newExampleApplier(cluster.Config)
	if err != nil {
		fmt.Println(err)
		return
	}
	ns := fmt.Sprintf("example-rollback-%d", rand.IntN(1_000_000))
	nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
	if _, err := applier.Apply(ctx, apply.Input{Objects: []*unstructured.Unstructured{nsObj}}, apply.Options{}); err != nil {
		fmt.Println(err)
		return
	}
	recording := &history.Options{Limit: history.DefaultLimit}
	for _, version := range []string{"1.0", "1.1"} {
		opts := apply.Options{Write: apply.WriteOptions{Namespace: ns}, Prune: &prune.Options{ApplySet: "web", History: recording}}
		if _, err := applier.Apply(ctx, apply.Input{Objects: []*unstructured.Unstructured{configMap("web", map[string]any{"version": version})}}, opts); err != nil {
			fmt.Println(err)
			return
		}
	}
	ref := apply.ApplySetRef{ApplySet: "web", Namespace: ns}
	p, err := applier.Rollback(ctx, ref, apply.RollbackOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, it := range p.Items {
		fmt.Printf("plan: %s %s (rollback to revision %d)\n", it.Action, it.ID.Name, p.Settings.RollbackTo)
	}
	events, err := applier.Execute(ctx, p, apply.ExecuteOptions{History: recording})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("executed:", events[0].Outcome, events[0].Object.Object["data"].(map[string]any)["version"])
	revs, err := applier.History(ctx, ref)
	if err != nil {
		fmt.Println(err)
		return
	}
	last := revs[len(revs)-1]
	fmt.Printf("revision %d %q\n", last.Number, last.ChangeCause)
	// Output:
	// plan: patch web (rollback to revision 1)
	// executed: configured 1.0
	// revision 3 "rollback to revision 1"
}
