package main

import (
	"fmt"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/kapply/kapply/pkg/apply"
)

// printEvents prints kubectl-style lines (`configmap/foo created`) on stdout
// and failures on stderr; it returns the number of failures.
func printEvents(streams genericiooptions.IOStreams, events []apply.Event) int {
	failed := 0
	for _, ev := range events {
		for _, w := range ev.Warnings {
			fmt.Fprintf(streams.ErrOut, "Warning: %s\n", w)
		}
		if ev.Outcome == apply.Failed {
			failed++
			fmt.Fprintf(streams.ErrOut, "error: %v\n", ev.Err)
			continue
		}
		printer := printers.NamePrinter{Operation: ev.Outcome.String()}
		if err := printer.PrintObj(ev.Object.Obj, streams.Out); err != nil {
			fmt.Fprintf(streams.ErrOut, "error: printing %s: %v\n", ev.Object.Ref(), err)
		}
	}
	return failed
}
