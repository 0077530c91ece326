package plan_test

import (
	"fmt"

	"github.com/kapply/kapply/pkg/plan"
)

// A migration Job waits for its database; a ConfigMap of sync-wave -1
// goes before both.
func ExampleOrder() {
	object := func(annotations map[string]any) map[string]any {
		return map[string]any{"metadata": map[string]any{"annotations": annotations}}
	}
	nodes := []plan.OrderNode{
		{ID: plan.ID{Group: "batch", Version: "v1", Kind: "Job", Namespace: "db", Name: "migrate"}, Resource: "jobs", Namespaced: true,
			Object: object(map[string]any{plan.DependsOnAnnotation: "apps/namespaces/db/StatefulSet/pg"})},
		{ID: plan.ID{Group: "apps", Version: "v1", Kind: "StatefulSet", Namespace: "db", Name: "pg"}, Resource: "statefulsets", Namespaced: true},
		{ID: plan.ID{Version: "v1", Kind: "ConfigMap", Namespace: "db", Name: "settings"}, Resource: "configmaps", Namespaced: true,
			Object: object(map[string]any{plan.SyncWaveAnnotation: "-1"})},
	}
	o, err := plan.Order(nodes, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, n := range nodes {
		fmt.Printf("step %d: %s (%s)\n", o.Waves[i], n.ID, o.Reasons[i])
	}
	for s, g := range o.Gates {
		fmt.Printf("before step %d: ready %v\n", s, g.Ready)
	}
	// Output:
	// step 2: Job.batch/migrate -n db (depends-on apps/namespaces/db/StatefulSet/pg)
	// step 1: StatefulSet.apps/pg -n db (sync-wave 0)
	// step 0: ConfigMap/settings -n db (sync-wave -1)
	// before step 0: ready []
	// before step 1: ready [ConfigMap/settings -n db]
	// before step 2: ready [StatefulSet.apps/pg -n db]
}
