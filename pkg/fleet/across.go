package fleet

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/kapply/kapply/pkg/apply"
)

// InStepState is the state of an object in step with its last apply.
const InStepState = "in step with the last apply"

// ObjectAcross is one object of a Status run whose clusters do not all
// stand in step with the last apply: the clusters of each state.
type ObjectAcross struct {
	Object, Source string
	// States maps each state (StateOf) to its clusters' contexts, sorted.
	States map[string][]string
	// Clusters is how many clusters were compared.
	Clusters int
}

// Across compares, object by object, the Statuses of the clusters of
// results that reported them (a Status run over the same files, so the
// i-th status of each is the same object); objects in step everywhere
// are left out, and so is everything when fewer than two clusters
// reported.
func Across(results []Result) []ObjectAcross {
	var reported []Result
	for _, r := range results {
		if r.Statuses != nil {
			reported = append(reported, r)
		}
	}
	if len(reported) < 2 {
		return nil
	}
	sort.SliceStable(reported, func(i, j int) bool { return reported[i].Context < reported[j].Context })
	var across []ObjectAcross
	for i, first := range reported[0].Statuses {
		states := map[string][]string{}
		for _, r := range reported {
			if i < len(r.Statuses) {
				state := StateOf(r.Statuses[i])
				states[state] = append(states[state], r.Context)
			}
		}
		if _, inStep := states[InStepState]; inStep && len(states) == 1 {
			continue
		}
		across = append(across, ObjectAcross{Object: first.Object, Source: first.Source, States: states, Clusters: len(reported)})
	}
	return across
}

// StateOf is how an object stands, comparable between clusters: its
// state and the fields changed since the last apply with their live
// values — not UIDs, resourceVersions, status or server defaults, which
// differ between clusters by nature. Mask Secret values before.
func StateOf(s apply.ObjectStatus) string {
	switch {
	case s.State == apply.StateMissing:
		return "not on the server"
	case s.State == apply.StateNoRecord:
		return "no last-applied record"
	case s.Drift == nil || len(s.Changed) == 0:
		return InStepState
	}
	var fields []string
	for _, c := range s.Changed {
		live := shownValue(c.Live)
		if c.LiveMissing {
			live = "(removed)"
		}
		fields = append(fields, fmt.Sprintf("%s: live %s, last applied %s", c.Path, live, shownValue(c.LastApplied)))
	}
	sort.Strings(fields)
	return "changed since the last apply: " + strings.Join(fields, "; ")
}

// shownValue is a field's value as JSON; "(none)" for no value.
func shownValue(v any) string {
	if v == nil {
		return "(none)"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
