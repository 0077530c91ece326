package main

import (
	"io"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kapply/kapply/pkg/apply"
	kcluster "github.com/kapply/kapply/pkg/cluster"
	"github.com/kapply/kapply/pkg/diff"
	"github.com/kapply/kapply/pkg/plan"
)

// diffEvents is diff's -o events writer; nil for another output (checked
// with diff's other -o values, diffOutput.check).
func diffEvents(output string, out io.Writer, dryRun kcluster.DryRun) *eventWriter {
	if output != eventsOutput {
		return nil
	}
	return newEventWriter(out, "diff", dryRun)
}

// diffOperations are apply's words for what it would do to an object.
var diffOperations = map[diff.Outcome]apply.Outcome{
	diff.Unchanged: apply.Unchanged, diff.Changed: apply.Configured,
	diff.Created: apply.Created, diff.Deleted: apply.Pruned,
}

// diff writes a DiffType event per comparison, in input order, an
// ErrorType per failure (told on stderr too; its message names the object
// and file, Secret values masked), and counts them for the summary. It
// reports whether any object differs.
func (e *eventWriter) diff(comparisons []diff.Comparison, failures []diff.Failure, failed int) (bool, error) {
	if e == nil {
		return false, nil
	}
	differs := false
	for _, c := range comparisons {
		operation := diffOperations[c.Outcome]
		changed := c.Outcome != diff.Unchanged
		differs = differs || changed
		ev := jsonEvent{Type: diffType, Status: statusSuccessful, Operation: operation.String(), Differs: &changed}
		if c.Outcome == diff.Changed {
			ev.ChangedPaths = changedPaths(c)
		}
		id := c.Object.ID
		ev.Object, ev.Verdicts = &id, c.Object.Verdicts
		if c.Object.Source != "" && c.Object.Source != prunedSource {
			ev.Source = &plan.Source{File: c.Object.Source}
		}
		e.write(ev)
		e.mu.Lock()
		e.counts[operation.String()]++
		e.mu.Unlock()
	}
	for _, f := range failures {
		ev := jsonEvent{Type: errorType, Status: statusFailed, Error: f.Message}
		if f.File != "" {
			ev.Source = &plan.Source{File: f.File, Line: f.Line}
		}
		e.write(ev)
	}
	e.summarize(apply.Summary{apply.Failed: failed})
	e.mu.Lock()
	e.differs = &differs
	e.mu.Unlock()
	return differs, nil
}

// changedPaths lists the leaf fields in which the comparison's two sides
// differ, as pkg/diff compared them (noise hidden, Secret values masked).
func changedPaths(c diff.Comparison) []string {
	paths := make([]string, len(c.Changed))
	for i, p := range c.Changed {
		paths[i] = p.String()
	}
	return paths
}

// textOut is where diff's other text goes (the ignore rules' notes and
// suggestions): stdout, but stderr with -o events, whose stdout holds
// only the JSON lines.
func (e *eventWriter) textOut(streams genericiooptions.IOStreams) io.Writer {
	if e == nil {
		return streams.Out
	}
	return streams.ErrOut
}
