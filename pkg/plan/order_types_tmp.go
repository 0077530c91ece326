package plan

import (
	"fmt"
	"maps"
	"slices"
)

// TEMPORARY until s12-order merges: the types the ordering defines.

// Gate is what a step waits for before any of its objects is sent.
type Gate struct {
	Ready       []ID
	Webhooks    []WebhookGate
	APIServices []ID
}

// WebhookGate names one webhook of a configuration of the run.
type WebhookGate struct {
	Configuration ID
	Webhook       string
	Probe         ID
}

type OrderNode struct {
	ID         ID
	Resource   string
	Namespaced bool
	Object     map[string]any
}

type Ordering struct {
	Waves    []int
	Reasons  []string
	Gates    []Gate
	Warnings []string
}

// Order: TEMPORARY sync-wave only.
func Order(nodes []OrderNode, namespaceLabels func(string) map[string]string) (Ordering, error) {
	declared := make([]int, len(nodes))
	values := map[int]bool{}
	for i, n := range nodes {
		md, _ := n.Object["metadata"].(map[string]any)
		ann, _ := md["annotations"].(map[string]any)
		if v, ok := ann["argocd.argoproj.io/sync-wave"].(string); ok {
			fmt.Sscan(v, &declared[i])
		}
		values[declared[i]] = true
	}
	sorted := slices.Sorted(maps.Keys(values))
	out := Ordering{Waves: make([]int, len(nodes)), Reasons: make([]string, len(nodes)), Gates: make([]Gate, len(sorted))}
	for i := range nodes {
		out.Waves[i] = slices.Index(sorted, declared[i])
		if len(sorted) > 1 {
			out.Reasons[i] = fmt.Sprintf("sync-wave %d", declared[i])
		}
	}
	for i, n := range nodes {
		if w := out.Waves[i]; w+1 < len(sorted) {
			out.Gates[w+1].Ready = append(out.Gates[w+1].Ready, n.ID)
		}
	}
	return out, nil
}
