package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/kapply/kapply/pkg/apply"
	kcluster "github.com/kapply/kapply/pkg/cluster"
	"github.com/kapply/kapply/pkg/plan"
	"github.com/kapply/kapply/pkg/wait"
)

// -o events: one JSON object per line on stdout, documented in
// docs/events.md and docs/events.schema.json.
const (
	eventsOutput     = "events"
	eventsAPIVersion = "kapply.dev/v1alpha1"
	eventsKind       = "Event"
)

// Event types and statuses are the names of sigs.k8s.io/cli-utils
// pkg/apply/event (its Type and *EventStatus strings), copied rather than
// imported: that package pulls cli-utils' object and polling packages, and
// with them kustomize, into the binary. SummaryType and DiffType are
// kapply's own; cli-utils has neither.
const (
	applyType   = "ApplyType"
	pruneType   = "PruneType"
	deleteType  = "DeleteType"
	waitType    = "WaitType"
	errorType   = "ErrorType"
	diffType    = "DiffType"
	summaryType = "SummaryType"

	statusSuccessful = "Successful"
	statusSkipped    = "Skipped"
	statusFailed     = "Failed"
	statusTimeout    = "Timeout"
)

// jsonEvent is one line of -o events. Fields not of its type are left out.
type jsonEvent struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Type       string `json:"type"`
	Timestamp  string `json:"timestamp"`
	Command    string `json:"command"`
	// Context is the kubeconfig context of a run over several (every
	// line of such a run has one).
	Context   string       `json:"context,omitempty"`
	Object    *plan.ID     `json:"object,omitempty"`
	Source    *plan.Source `json:"source,omitempty"`
	Status    string       `json:"status,omitempty"`
	Operation string       `json:"operation,omitempty"`
	DryRun    string       `json:"dryRun,omitempty"`
	Error     string       `json:"error,omitempty"`
	Warnings  []string     `json:"warnings,omitempty"`
	// Wave and WaveReason: the wave of a run of several the object was
	// sent in, and why (apply.Event.Wave).
	Wave       *int   `json:"wave,omitempty"`
	WaveReason string `json:"waveReason,omitempty"`
	// WaitType: kstatus' status, and the reason and message of the
	// condition that says why.
	Readiness string `json:"readiness,omitempty"`
	Reason    string `json:"reason,omitempty"`
	Message   string `json:"message,omitempty"`
	// DiffType: whether the object would change, and the paths of the
	// leaf fields that would (never their values).
	Differs      *bool    `json:"differs,omitempty"`
	ChangedPaths []string `json:"changedPaths,omitempty"`
	// Verdicts: kapply --check's on the object's write (a Secret's
	// messages withheld, as in the plan file).
	Verdicts []plan.Verdict `json:"verdicts,omitempty"`
	// SummaryType: objects per operation, and per wait status.
	Counts     map[string]int `json:"counts,omitempty"`
	WaitCounts map[string]int `json:"waitCounts,omitempty"`
}

// fleetContextWriter is the stdout of one cluster of a run over several
// contexts, which names the cluster's context.
type fleetContextWriter interface{ fleetContext() string }

// eventWriter writes -o events lines; its methods may be called from
// several goroutines (the wait reports from its own).
type eventWriter struct {
	command string
	dryRun  string
	context string
	mu      sync.Mutex
	w       io.Writer
	// writeErr is the first failed write: the run fails, as when a line
	// of kubectl's output is lost.
	writeErr error
	// counts and waitCounts make the summary.
	counts     map[string]int
	waitCounts map[string]int
	// differs is diff's answer, for its summary.
	differs *bool
	now     func() time.Time
}

func newEventWriter(w io.Writer, command string, dryRun kcluster.DryRun) *eventWriter {
	e := &eventWriter{command: command, w: w, counts: map[string]int{}, waitCounts: map[string]int{}, now: time.Now}
	if c, ok := w.(fleetContextWriter); ok {
		e.context = c.fleetContext()
	}
	// Every outcome counted, 0 or not, so that readers need no defaults.
	for outcome := apply.Failed; outcome <= apply.Skipped; outcome++ {
		e.counts[outcome.String()] = 0
	}
	switch dryRun {
	case kcluster.ClientDryRun:
		e.dryRun = "client"
	case kcluster.ServerDryRun:
		e.dryRun = "server"
	}
	return e
}

// write stamps ev and writes it as one line.
func (e *eventWriter) write(ev jsonEvent) {
	ev.APIVersion, ev.Kind, ev.Command, ev.Context = eventsAPIVersion, eventsKind, e.command, e.context
	ev.Timestamp = e.now().UTC().Format(time.RFC3339Nano)
	if ev.Type != summaryType && ev.Type != errorType {
		ev.DryRun = e.dryRun
	}
	line, err := json.Marshal(ev)
	if err == nil {
		line = append(line, '\n')
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if err == nil {
		_, err = e.w.Write(line)
	}
	if err != nil && e.writeErr == nil {
		e.writeErr = fmt.Errorf("writing the events: %w", err)
	}
}

// object writes an event of apply or delete, whose error and warnings are
// masked already (by pkg/apply; flag names by eventsWithFlagNames).
func (e *eventWriter) object(ev apply.Event) {
	out := jsonEvent{Type: e.typeOf(ev), Operation: ev.Outcome.String(), Status: statusSuccessful, Warnings: ev.Warnings}
	switch ev.Outcome {
	case apply.Failed:
		out.Status = statusFailed
	case apply.Skipped:
		out.Status = statusSkipped
	}
	if ev.Err != nil {
		out.Error = ev.Err.Error()
	}
	if ev.Wave > 0 || ev.WaveReason != "" {
		wave := ev.Wave
		out.Wave, out.WaveReason = &wave, ev.WaveReason
	}
	if ev.Object != nil {
		id := plan.IDOf(ev.Object)
		if ev.Mapping != nil {
			id.Group, id.Version, id.Kind = ev.Mapping.GroupVersionKind.Group, ev.Mapping.GroupVersionKind.Version, ev.Mapping.GroupVersionKind.Kind
		}
		out.Object = &id
	}
	if ev.Source != (plan.Source{}) && ev.Source.File != prunedSource {
		source := ev.Source
		out.Source = &source
	}
	e.write(out)
}

// typeOf is the event's cli-utils type: a failure that is no object's (a
// file that could not be read, the prune step) is an ErrorType.
func (e *eventWriter) typeOf(ev apply.Event) string {
	switch {
	case ev.Object == nil:
		return errorType
	case ev.Outcome == apply.Pruned || ev.Source.File == prunedSource:
		return pruneType
	case ev.Outcome == apply.Deleted || e.command == "delete":
		return deleteType
	}
	return applyType
}

// prunedSource is the Source.File pkg/apply gives pruning's events.
const prunedSource = "(pruned)"

// summarize keeps the run's counts for the summary written last.
func (e *eventWriter) summarize(s apply.Summary) {
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for outcome, n := range s {
		e.counts[outcome.String()] += n
	}
}

// wait writes one object's readiness, as apply --wait prints its line.
func (e *eventWriter) wait(r wait.Result) {
	if e == nil {
		return
	}
	out := jsonEvent{Type: waitType, Readiness: string(r.Status), Reason: r.Reason, Message: r.Message}
	switch {
	case r.Ready():
		out.Status, out.Operation = statusSuccessful, "ready"
	case r.Deleted():
		out.Status, out.Operation, out.Error = statusFailed, "failed", deletedWhileWaiting
	case r.Status == kstatus.FailedStatus:
		out.Status, out.Operation, out.Error = statusFailed, "failed", explain(r)
	default:
		out.Status, out.Operation = statusTimeout, "not-ready"
	}
	gvk := r.Target.Mapping.GroupVersionKind
	out.Object = &plan.ID{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: r.Target.Namespace, Name: r.Target.Name}
	e.mu.Lock()
	e.waitCounts[out.Operation]++
	e.mu.Unlock()
	e.write(out)
}

// startEvents starts the JSON lines with -o events; nil otherwise.
func (p *eventPrinter) startEvents(out io.Writer, command string, dryRun kcluster.DryRun) *eventWriter {
	if p.output == eventsOutput {
		p.json = newEventWriter(out, command, dryRun)
	}
	return p.json
}

// finishInto is finish for a deferred call: it replaces *runErr.
func (e *eventWriter) finishInto(runErr *error) { *runErr = e.finish(*runErr) }

// finish writes the run's error, if it has one not yet told, then the
// summary, and returns the run's error, or the failure to write.
func (e *eventWriter) finish(runErr error) error {
	if e == nil {
		return runErr
	}
	if msg := untoldError(runErr); msg != "" {
		e.write(jsonEvent{Type: errorType, Status: statusFailed, Error: msg})
	}
	e.mu.Lock()
	summary := jsonEvent{Type: summaryType, Counts: e.counts, Differs: e.differs}
	if len(e.waitCounts) > 0 {
		summary.WaitCounts = e.waitCounts
	}
	e.mu.Unlock()
	summary.Status = statusSuccessful
	if untoldError(runErr) != "" || e.counts[apply.Failed.String()] > 0 || e.writeErr != nil {
		summary.Status = statusFailed
	}
	e.write(summary)
	if runErr == nil && e.writeErr != nil {
		return withCode(exitFailed, e.writeErr)
	}
	return runErr
}

// untoldError is the text of a run's error that no event carries: one
// with a message (an error with only an exit code was printed already).
func untoldError(err error) string {
	if err == nil {
		return ""
	}
	if coded, ok := err.(*codedError); ok {
		if coded.err == nil {
			return ""
		}
		return withFlagNames(coded.err).Error()
	}
	return withFlagNames(err).Error()
}

// newDeletePrinter is delete's printer: kubectl delete's lines, -o name
// (the only -o kubectl delete takes) or -o events.
func newDeletePrinter(output string, dryRun kcluster.DryRun) (*eventPrinter, error) {
	if output != "" && output != "name" && output != eventsOutput {
		return nil, fmt.Errorf(`--output must be "name" or "events", not %q`, output)
	}
	printer, err := newEventPrinter(output, dryRun)
	if err != nil {
		return nil, err
	}
	printer.deleting = true
	return printer, nil
}
