package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/kapply/kapply/pkg/fleet"
)

// printAcross writes, for each object whose clusters do not all stand
// alike in step (fleet.Across), the clusters of each state; nothing when
// every cluster is in step.
func printAcross(w io.Writer, results []fleet.Result) error {
	var b strings.Builder
	for _, o := range fleet.Across(results) {
		fmt.Fprintf(&b, "%s (from %s): %d state(s) across %d cluster(s)\n", o.Object, o.Source, len(o.States), o.Clusters)
		states := make([]string, 0, len(o.States))
		for state := range o.States {
			states = append(states, state)
		}
		sort.Strings(states)
		for _, state := range states {
			fmt.Fprintf(&b, "  %s: %s\n", state, strings.Join(o.States[state], ", "))
		}
	}
	if b.Len() == 0 {
		return nil
	}
	_, err := io.WriteString(w, "Across clusters:\n"+b.String())
	return err
}
