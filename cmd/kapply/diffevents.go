package main

import (
	"fmt"
	"io"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	"github.com/kapply/kapply/pkg/apply"
	kcluster "github.com/kapply/kapply/pkg/cluster"
	"github.com/kapply/kapply/pkg/diff"
	"github.com/kapply/kapply/pkg/fieldpath"
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
			paths, err := changedPaths(c)
			if err != nil {
				return differs, err
			}
			ev.ChangedPaths = paths
		}
		id := c.Object.ID
		ev.Object = &id
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
// differ, read from the YAML pkg/diff shows: noise hidden, Secret values
// masked (a mask says only whether a value changed).
func changedPaths(c diff.Comparison) ([]string, error) {
	var live, after map[string]any
	if err := yaml.Unmarshal([]byte(c.Live), &live); err != nil {
		return nil, fmt.Errorf("reading the live side of %s: %w", c.Object.Ref, err)
	}
	if err := yaml.Unmarshal([]byte(c.After), &after); err != nil {
		return nil, fmt.Errorf("reading the merged side of %s: %w", c.Object.Ref, err)
	}
	var paths []string
	walkChanges(live, after, nil, &paths)
	return paths, nil
}

// walkChanges appends the paths of differing leaves: maps field by field
// (sorted), lists of equal length item by item, anything else whole.
// Hand-written: the libraries that compare objects (structured-merge-diff's
// typed compare) need the schema, and apimachinery's patch makers give a
// patch, not paths; pkg/diff's countDiff counts with the same rule.
func walkChanges(a, b any, at fieldpath.Path, paths *[]string) {
	am, aIsMap := a.(map[string]any)
	bm, bIsMap := b.(map[string]any)
	if aIsMap && bIsMap {
		fieldpath.EachField(at, am, bm, func(p fieldpath.Path, av, bv any) {
			walkChanges(av, bv, p, paths)
		})
		return
	}
	al, aIsList := a.([]any)
	bl, bIsList := b.([]any)
	if aIsList && bIsList && len(al) == len(bl) {
		for i := range al {
			walkChanges(al[i], bl[i], at.Child(fieldpath.Index(i)), paths)
		}
		return
	}
	if !fieldpath.Equal(a, b) {
		*paths = append(*paths, at.String())
	}
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
