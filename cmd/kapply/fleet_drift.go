package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/kapply/kapply/pkg/apply"
)

// objectState is how one object stands in one cluster, for comparing
// clusters: its state and the fields changed since the last apply with
// their live values (Secret values masked) — not UIDs, resourceVersions,
// status or server defaults, which differ between clusters by nature.
type objectState struct {
	object, source string
	// state is "in step", "not on the server", "no last-applied record"
	// or the changed fields, one "path: live VALUE" per line.
	state string
}

// setStatuses keeps how each object of the files stands in the cluster;
// a nil report (one context) keeps nothing.
func (r *clusterReport) setStatuses(statuses []apply.ObjectStatus) {
	if r == nil {
		return
	}
	states := make([]objectState, len(statuses))
	for i, s := range statuses {
		states[i] = objectState{object: s.Object, source: s.Source, state: stateOf(s)}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.states = states
}

// stateOf is an object's state, as objectState keeps it.
func stateOf(s apply.ObjectStatus) string {
	switch {
	case s.State == apply.StateMissing:
		return "not on the server"
	case s.State == apply.StateNoRecord:
		return "no last-applied record"
	case s.Drift == nil || len(s.Changed) == 0:
		return "in step with the last apply"
	}
	var fields []string
	for _, c := range s.Changed {
		live := showValue(c.Live)
		if c.LiveMissing {
			live = "(removed)"
		}
		fields = append(fields, fmt.Sprintf("%s: live %s, last applied %s", c.Path, live, showValue(c.LastApplied)))
	}
	sort.Strings(fields)
	return "changed since the last apply: " + strings.Join(fields, "; ")
}

// crossDrift collects each cluster's object states; the files are the
// same in every cluster, so the i-th state of each is the same object.
type crossDrift struct {
	byContext map[string][]objectState
	order     []string
}

func (d *crossDrift) add(context string, states []objectState) {
	if states == nil {
		return
	}
	if d.byContext == nil {
		d.byContext = map[string][]objectState{}
	}
	d.byContext[context] = states
	d.order = append(d.order, context)
}

// print writes, for each object whose clusters do not all stand alike in
// step, the clusters of each state; nothing when every cluster is in step.
func (d *crossDrift) print(w io.Writer) error {
	if len(d.order) < 2 {
		return nil
	}
	sort.Strings(d.order)
	var b strings.Builder
	for i, first := range d.byContext[d.order[0]] {
		groups := map[string][]string{}
		for _, ctx := range d.order {
			if states := d.byContext[ctx]; i < len(states) {
				groups[states[i].state] = append(groups[states[i].state], ctx)
			}
		}
		if _, allInStep := groups["in step with the last apply"]; allInStep && len(groups) == 1 {
			continue
		}
		fmt.Fprintf(&b, "%s (from %s): %d state(s) across %d cluster(s)\n", first.object, first.source, len(groups), len(d.order))
		states := make([]string, 0, len(groups))
		for state := range groups {
			states = append(states, state)
		}
		sort.Strings(states)
		for _, state := range states {
			fmt.Fprintf(&b, "  %s: %s\n", state, strings.Join(groups[state], ", "))
		}
	}
	if b.Len() == 0 {
		return nil
	}
	_, err := io.WriteString(w, "Across clusters:\n"+b.String())
	return err
}
