package fleet

import (
	"fmt"

	"github.com/kapply/kapply/pkg/plan"
)

// Worst is the run's exit code, the worst of its clusters', and how many
// clusters failed.
func Worst(results []Result) (code, failed int) {
	for _, r := range results {
		code = max(code, r.Code)
		if r.ClusterFailed {
			failed++
		}
	}
	return code, failed
}

// PlanSet is the plans the clusters of results made (Plan, Diff), in
// their order, as one PlanList for Execute, and how many clusters made
// none: a list missing a cluster's plan should not be written (applying
// it would leave that cluster out without a word).
func PlanSet(results []Result) (*plan.Set, int) {
	set, missing := &plan.Set{}, 0
	for _, r := range results {
		if r.ClusterFailed || r.Plan == nil {
			missing++
			continue
		}
		set.Plans = append(set.Plans, plan.Entry{Context: r.Context, Plan: r.Plan})
	}
	return set, missing
}

// PlansFor checks that set holds a plan for each of clusters, and returns
// the contexts it holds plans for that clusters leave out (their plans
// are not executed). A cluster without a plan is an error naming each.
func PlansFor(set *plan.Set, clusters []Cluster) (left []string, err error) {
	picked := map[string]bool{}
	var missing []string
	for _, c := range clusters {
		picked[c.Context] = true
		if _, ok := set.For(c.Context); !ok {
			missing = append(missing, c.Context)
		}
	}
	if len(missing) > 0 {
		return nil, &MissingPlansError{Contexts: missing}
	}
	for _, name := range set.Contexts() {
		if !picked[name] {
			left = append(left, name)
		}
	}
	return left, nil
}

// MissingPlansError names the clusters a PlanList holds no plan for.
type MissingPlansError struct{ Contexts []string }

func (e *MissingPlansError) Error() string {
	return fmt.Sprintf("no plan for context(s) %q", e.Contexts)
}
