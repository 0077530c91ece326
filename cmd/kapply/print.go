package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/load"
)

// eventPrinter prints a run's events as kubectl does: a line per object
// (`configmap/foo created`), or the objects themselves with -o.
type eventPrinter struct {
	output string
	// suffix marks dry runs, in kubectl's words.
	suffix string
	// deleting prints the summary of a delete run.
	deleting bool
	// serverSide prints kubectl --server-side's one word for every object
	// it applied, "serverside-applied", which scripts match; the summary
	// line on stderr still tells created, configured and unchanged apart.
	serverSide bool
}

func newEventPrinter(output string, dryRun apply.DryRun) (*eventPrinter, error) {
	switch output {
	case "", "name", "yaml", "json":
	default:
		return nil, fmt.Errorf(`--output must be "name", "yaml" or "json", not %q`, output)
	}
	p := &eventPrinter{output: output}
	switch dryRun {
	case apply.ClientDryRun:
		p.suffix = " (dry run)"
	case apply.ServerDryRun:
		p.suffix = " (server dry run)"
	}
	return p, nil
}

// print writes the events and returns how many failed. Failures and warnings
// go to stderr; with the default output, so does the summary line, keeping
// stdout what kubectl would print.
func (p *eventPrinter) print(streams genericiooptions.IOStreams, events []apply.Event) int {
	return p.printRest(streams, events, nil)
}

// printRest is print for events some of which a lineStream printed already:
// printed holds, per place in events, how many of its warnings were printed;
// only warnings added since are printed for those.
func (p *eventPrinter) printRest(streams genericiooptions.IOStreams, events []apply.Event, printed map[int]int) int {
	events = maskEventSecrets(events)
	var results []runtime.Object
	for i, ev := range events {
		if n, done := printed[i]; done {
			printWarnings(streams.ErrOut, apply.Event{Warnings: ev.Warnings[min(n, len(ev.Warnings)):]})
			continue
		}
		if (p.output == "yaml" || p.output == "json") && ev.Outcome != apply.Failed && ev.Outcome != apply.Skipped {
			printWarnings(streams.ErrOut, ev)
			results = append(results, ev.Result)
			continue
		}
		p.printEvent(streams, ev)
	}
	if err := p.printObjects(streams.Out, results); err != nil {
		fmt.Fprintf(streams.ErrOut, "error: printing objects: %v\n", err)
	}
	summary := apply.Summarize(events)
	if p.output == "" {
		fmt.Fprintln(streams.ErrOut, p.summaryLine(summary))
	}
	return summary[apply.Failed]
}

// printEvent prints one event's warnings and its line or error.
func (p *eventPrinter) printEvent(streams genericiooptions.IOStreams, ev apply.Event) {
	printWarnings(streams.ErrOut, ev)
	switch ev.Outcome {
	case apply.Failed:
		fmt.Fprintf(streams.ErrOut, "%s%v\n", errorPrefix(ev.Err), ev.Err)
	case apply.Skipped:
	default:
		p.printLine(streams, ev)
	}
}

// summaryLine counts the outcomes: apply's four always, others when present.
func (p *eventPrinter) summaryLine(s apply.Summary) string {
	line := fmt.Sprintf("%d created, %d configured, %d unchanged", s[apply.Created], s[apply.Configured], s[apply.Unchanged])
	if p.deleting {
		line = fmt.Sprintf("%d deleted", s[apply.Deleted])
	}
	if n := s[apply.Pruned]; n > 0 {
		line += fmt.Sprintf(", %d pruned", n)
	}
	if n := s[apply.Skipped]; n > 0 {
		line += fmt.Sprintf(", %d skipped", n)
	}
	return line + fmt.Sprintf(", %d failed%s", s[apply.Failed], p.suffix)
}

func printWarnings(w io.Writer, ev apply.Event) {
	for _, warning := range ev.Warnings {
		fmt.Fprintf(w, "Warning: %s\n", warning)
	}
}

func (p *eventPrinter) printLine(streams genericiooptions.IOStreams, ev apply.Event) {
	if ev.Outcome == apply.Deleted && p.output == "" {
		fmt.Fprintln(streams.Out, deletedLine(ev.Object, p.suffix))
		return
	}
	printer := printers.NamePrinter{}
	if p.output == "" {
		printer.Operation = ev.Outcome.String() + p.suffix
		switch ev.Outcome {
		case apply.Created, apply.Configured, apply.Unchanged:
			if p.serverSide {
				printer.Operation = "serverside-applied" + p.suffix
			}
		}
	}
	if err := printer.PrintObj(ev.Object.Obj, streams.Out); err != nil {
		fmt.Fprintf(streams.ErrOut, "error: printing %s: %v\n", ev.Object.Ref(), err)
	}
}

// printObjects prints one object as it is, several as a List, as kubectl
// apply -o yaml|json does — but a Secret's values masked.
func (p *eventPrinter) printObjects(w io.Writer, objs []runtime.Object) error {
	if len(objs) == 0 {
		return nil
	}
	objs = maskObjects(objs)
	var printer printers.ResourcePrinter = &printers.JSONPrinter{}
	if p.output == "yaml" {
		printer = &printers.YAMLPrinter{}
	}
	if len(objs) == 1 {
		return printer.PrintObj(objs[0], w)
	}
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{}}}
	for _, obj := range objs {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			list.Items = append(list.Items, *u)
		}
	}
	return printer.PrintObj(list, w)
}

// errorPrefix is how kubectl (cmdutil.CheckErr) starts the line of an
// error: "Error from server (Conflict): " for one the API server returned
// with a reason, "error: " for others. An Invalid error keeps "error: ": it
// names its object ("The Pod "x" is invalid"), where kubectl prints no
// prefix at all.
func errorPrefix(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		if reason := status.Status().Reason; reason != "" && reason != metav1.StatusReasonInvalid {
			return fmt.Sprintf("Error from server (%s): ", reason)
		}
	}
	return "error: "
}

// deletedLine is kubectl delete's line for a deleted object (kubectl 1.37):
// `configmap "cm" deleted from shop namespace`, `namespace "shop" deleted`.
func deletedLine(o *load.Object, suffix string) string {
	kind := o.Name()[:strings.LastIndex(o.Name(), "/")]
	line := fmt.Sprintf("%s %q deleted", kind, o.Obj.GetName())
	if ns := o.Obj.GetNamespace(); ns != "" && (o.Mapping == nil || o.Mapping.Scope.Name() == meta.RESTScopeNameNamespace) {
		line += fmt.Sprintf(" from %s namespace", ns)
	}
	return line + suffix
}
