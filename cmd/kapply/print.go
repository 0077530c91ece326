package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/kapply/kapply/pkg/apply"
	kcluster "github.com/kapply/kapply/pkg/cluster"
	"github.com/kapply/kapply/pkg/shown"
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
	// unprinted counts the objects whose line or manifest could not be
	// printed: each fails the run. One printer prints at a time (a
	// lineStream under its lock, then printRest).
	unprinted int
	// json writes the events as JSON lines with -o events (events.go).
	json *eventWriter
}

func newEventPrinter(output string, dryRun kcluster.DryRun) (*eventPrinter, error) {
	switch output {
	case "", "name", "yaml", "json", "kyaml", eventsOutput:
	default:
		return nil, fmt.Errorf(`--output must be "name", "yaml", "json", "kyaml" or "events", not %q`, output)
	}
	p := &eventPrinter{output: output}
	switch dryRun {
	case kcluster.ClientDryRun:
		p.suffix = " (dry run)"
	case kcluster.ServerDryRun:
		p.suffix = " (server dry run)"
	}
	return p, nil
}

// print writes the events and returns how many failures there were:
// failed objects, a failed step of the run (pruning) and objects that
// could not be printed. Failures and warnings go to stderr; with the
// default output, so does the summary line, keeping stdout what kubectl
// would print.
func (p *eventPrinter) print(streams genericiooptions.IOStreams, events []apply.Event) int {
	return p.printRest(streams, events, nil)
}

// printRest is print for events some of which a lineStream printed already:
// printed holds, per place in events, how many of its warnings were printed;
// only warnings added since are printed for those.
func (p *eventPrinter) printRest(streams genericiooptions.IOStreams, events []apply.Event, printed map[int]int) int {
	events = eventsWithFlagNames(events)
	var results []apply.Event
	for i, ev := range events {
		if n, done := printed[i]; done {
			printWarnings(streams.ErrOut, apply.Event{Warnings: ev.Warnings[min(n, len(ev.Warnings)):]})
			continue
		}
		if p.printsObjects() && ev.Outcome != apply.Failed && ev.Outcome != apply.Skipped {
			printWarnings(streams.ErrOut, ev)
			results = append(results, ev)
			continue
		}
		p.printEvent(streams, ev)
	}
	p.printObjects(streams, results)
	summary := apply.Summarize(events)
	if p.output == "" {
		fmt.Fprintln(streams.ErrOut, p.summaryLine(summary))
	}
	p.json.summarize(summary)
	failures := p.unprinted
	for _, ev := range events {
		if ev.Outcome == apply.Failed {
			failures++
		}
	}
	return failures
}

// printEvent prints one event's warnings and its line or error.
func (p *eventPrinter) printEvent(streams genericiooptions.IOStreams, ev apply.Event) {
	printWarnings(streams.ErrOut, ev)
	if p.json != nil {
		p.json.object(ev)
		return
	}
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
	out := &checkedWriter{w: streams.Out}
	var err error
	if ev.Outcome == apply.Deleted && p.output == "" {
		_, err = fmt.Fprintln(out, deletedLine(ev, p.suffix))
	} else {
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
		err = printName(printer, ev, out)
	}
	if err == nil {
		err = out.err
	}
	if err != nil {
		p.notPrinted(streams.ErrOut, ev, err)
	}
}

// printName prints the object's line as kubectl's NamePrinter does
// (kind.group/name operation), but with a name or kind that does not show
// as itself quoted, as apply.ObjectName spells it: NamePrinter prints
// them raw, and a server takes names such as a ClusterRole's with any
// character but / and %.
func printName(printer printers.NamePrinter, ev apply.Event, out io.Writer) error {
	gk := ev.Object.GroupVersionKind().GroupKind()
	if !shown.NeedsQuotes(ev.Object.GetName()) && !shown.NeedsQuotes(gk.Kind+gk.Group) {
		return printer.PrintObj(ev.Object, out)
	}
	line := apply.ObjectName(ev.Object)
	if printer.Operation != "" {
		line += " " + printer.Operation
	}
	_, err := fmt.Fprintln(out, line)
	return err
}

// checkedWriter keeps the first error of its writes: NamePrinter drops
// them, and a line lost on a closed stdout must fail the run.
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

// notPrinted reports an object done but not printed, naming it and its
// file; the run fails (exit 1), as kubectl's does when it cannot print.
func (p *eventPrinter) notPrinted(stderr io.Writer, ev apply.Event, err error) {
	p.unprinted++
	what := "printing it"
	if p.output != "" {
		what += " as " + p.output
	}
	fmt.Fprintf(stderr, "error: %v\n", apply.ErrorOf(ev.Object, ev.Source, fmt.Errorf("%s%s, but %s failed: %w", ev.Outcome, p.suffix, what, err)))
}

// printObjects prints the events' objects (the server's results) as
// kubectl apply -o yaml|json does: one as it is, several as a List — but a
// Secret's values masked. kubectl prints nothing when one object cannot be
// encoded (yaml refuses some control characters in a value); here that
// object is named on stderr and the others are printed.
func (p *eventPrinter) printObjects(streams genericiooptions.IOStreams, events []apply.Event) {
	if len(events) == 0 {
		return
	}
	objs := make([]runtime.Object, len(events))
	for i, ev := range events {
		objs[i] = ev.Result
	}
	objs = maskObjects(objs)
	var out bytes.Buffer
	if err := p.objectPrinter().PrintObj(asList(objs, len(objs) > 1), &out); err != nil {
		// Rare: find the objects at fault, one by one, and leave them out.
		var printable []runtime.Object
		for i, obj := range objs {
			if err := p.objectPrinter().PrintObj(obj, io.Discard); err != nil {
				p.notPrinted(streams.ErrOut, events[i], err)
				continue
			}
			printable = append(printable, obj)
		}
		out.Reset()
		if len(printable) == 0 {
			return
		}
		if err := p.objectPrinter().PrintObj(asList(printable, len(objs) > 1), &out); err != nil {
			p.unprinted++
			fmt.Fprintf(streams.ErrOut, "error: printing the objects as %s: %v\n", p.output, err)
			return
		}
	}
	if _, err := streams.Out.Write(out.Bytes()); err != nil {
		p.unprinted++
		fmt.Fprintf(streams.ErrOut, "error: writing the objects: %v\n", err)
	}
}

// objectPrinter is a new printer of -o (see objectPrinter), without the
// objects' managedFields, as kubectl apply -o prints them (its
// --show-managed-fields, which kapply lacks, is false by default).
func (p *eventPrinter) objectPrinter() printers.ResourcePrinter {
	if printer := objectPrinter(p.output); printer != nil {
		return &printers.OmitManagedFieldsPrinter{Delegate: printer}
	}
	return nil
}

// printsObjects reports whether -o prints the objects (yaml, json, kyaml)
// rather than a line per object.
func (p *eventPrinter) printsObjects() bool { return objectPrinter(p.output) != nil }

// asList is the one object, or a List of them when list is set.
func asList(objs []runtime.Object, list bool) runtime.Object {
	if !list {
		return objs[0]
	}
	l := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{}}}
	for _, obj := range objs {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			l.Items = append(l.Items, *u)
		}
	}
	return l
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
func deletedLine(ev apply.Event, suffix string) string {
	line := fmt.Sprintf("%s %q deleted", apply.ObjectKind(ev.Object), ev.Object.GetName())
	if ns := ev.Object.GetNamespace(); ns != "" && (ev.Mapping == nil || ev.Mapping.Scope.Name() == meta.RESTScopeNameNamespace) {
		line += fmt.Sprintf(" from %s namespace", shown.Text(ns))
	}
	return line + suffix
}
