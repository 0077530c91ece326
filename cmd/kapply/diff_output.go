package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/diff"
)

// Values of diff's -o: "" is the unified diff (or --summary's lines).
const (
	diffOutputMarkdown = "markdown"
	diffOutputHTML     = "html"
)

// githubStepSummary names the file GitHub Actions shows as a job's summary.
const githubStepSummary = "GITHUB_STEP_SUMMARY"

// diffOutput are diff's flags choosing a report for people and CI.
type diffOutput struct {
	format   string
	maxBytes int
	github   bool
}

func addDiffOutputFlags(flags *pflag.FlagSet, o *diffOutput) {
	flags.StringVarP(&o.format, "output", "o", "", `output format: empty for the unified diff, "markdown" (a pull request comment), "html" (a self-contained report) or "events" (a JSON object per line, docs/events.md)`)
	flags.IntVar(&o.maxBytes, "max-bytes", diff.DefaultMarkdownBytes, "with -o markdown: cut the report to this many bytes, naming the objects left out")
	flags.BoolVar(&o.github, "github", false, "with -o markdown: also append the report to $GITHUB_STEP_SUMMARY and print to stderr an ::error command per failed object")
}

// check refuses flags that do not go together.
func (o diffOutput) check(summary bool) error {
	switch o.format {
	case "", diffOutputMarkdown, diffOutputHTML, eventsOutput:
	default:
		return fmt.Errorf(`--output must be "markdown", "html" or "events", not %q`, o.format)
	}
	switch {
	case o.format != "" && summary:
		return fmt.Errorf("--summary and --output=%s cannot be used together", o.format)
	case o.github && o.format != diffOutputMarkdown:
		return errors.New("--github needs --output=markdown")
	case o.format == diffOutputMarkdown && o.maxBytes < diff.MinMarkdownBytes:
		return fmt.Errorf("--max-bytes must be at least %d, not %d", diff.MinMarkdownBytes, o.maxBytes)
	}
	return nil
}

// reports reports whether diff writes a report rather than diffs: then the
// comparisons keep their sides for it (the printer renders none early).
func (o diffOutput) reports() bool { return o.format != "" }

// showOutput writes the report -o asks for, or the diffs as show does, and
// reports whether any object differs.
func showOutput(ctx context.Context, streams genericiooptions.IOStreams, printer diff.Printer, o diffOutput, comparisons []diff.Comparison, failures []diff.Failure) (bool, error) {
	var report string
	var err error
	switch o.format {
	case "":
		return show(ctx, streams, printer, comparisons)
	case diffOutputMarkdown:
		report, err = diff.Markdown(comparisons, failures, o.maxBytes)
	case diffOutputHTML:
		report, err = diff.HTML(comparisons, failures, printer.Options)
	}
	if err != nil {
		return false, err
	}
	if _, err := io.WriteString(streams.Out, report); err != nil {
		return false, fmt.Errorf("writing the report: %w", err)
	}
	if o.github {
		if err := writeGitHub(streams.ErrOut, report, failures, comparisons); err != nil {
			return false, err
		}
	}
	return differs(comparisons), nil
}

// writeGitHub appends the report to the job's summary file, when the
// runner names one, and prints the failures as workflow commands to w,
// stderr: the runner reads commands there as on stdout, and the markdown
// on stdout stays clean for a comment. The verdicts of --check follow, on
// the lines of the objects' documents.
func writeGitHub(out io.Writer, report string, failures []diff.Failure, comparisons []diff.Comparison) error {
	if path := os.Getenv(githubStepSummary); path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return fmt.Errorf("$%s: %w", githubStepSummary, err)
		}
		_, err = io.WriteString(f, report)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("writing $%s (%s): %w", githubStepSummary, path, err)
		}
	}
	_, err := io.WriteString(out, diff.GitHubErrors(failures)+diff.GitHubVerdicts(comparisons))
	return err
}

func differs(comparisons []diff.Comparison) bool {
	for _, c := range comparisons {
		if c.Outcome != diff.Unchanged {
			return true
		}
	}
	return false
}

// failuresOf lists the events that failed, as the reports show them: the
// object, the file and line of its document, the error with the Secret
// values masked. Called before collect, which drops the events' objects.
func failuresOf(events []apply.Event) []diff.Failure {
	var out []diff.Failure
	for _, ev := range events {
		if ev.Outcome != apply.Failed {
			continue
		}
		ev = eventsWithFlagNames([]apply.Event{ev})[0]
		f := diff.Failure{File: ev.Source.File, Line: ev.Source.Line, Message: fmt.Sprint(ev.Err)}
		if ev.Object != nil {
			f.Identity = diff.Identity{Kind: ev.Object.GetKind(), Namespace: ev.Object.GetNamespace(), Name: ev.Object.GetName()}
		}
		out = append(out, f)
	}
	return out
}
