package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kapply/kapply/pkg/apply"
	kcluster "github.com/kapply/kapply/pkg/cluster"
	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/load"
)

func newLastAppliedCommand(getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "last-applied",
		Short: "View, set or edit the last-applied configuration, as kubectl apply view-/set-/edit-last-applied",
		Long: `The last-applied configuration (annotation kubectl.kubernetes.io/last-applied-configuration)
is what the next apply compares the file with: a field it has and the file lacks is
deleted. These commands read and write it byte for byte as kubectl's
view-last-applied, set-last-applied and edit-last-applied do, so either tool reads
what the other wrote. set and edit write each object in turn: a write the server
refuses is reported, the others are still written, and the exit code is then 1.

A Secret's values are recorded and shown redacted, each a salted digest (an older
plain record, kubectl's, is redacted for view and edit): see docs/secret-records.md.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(
		newLastAppliedViewCommand(getter, streams),
		newLastAppliedSetCommand(getter, streams),
		newLastAppliedEditCommand(getter, streams),
	)
	return cmd
}

// lastAppliedViewOptions are the flags of `kapply last-applied view`.
type lastAppliedViewOptions struct {
	files  fileFlags
	output string
}

func newLastAppliedViewCommand(getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var opts lastAppliedViewOptions
	cmd := &cobra.Command{
		Use:   "view (TYPE/NAME... | TYPE NAME... | -f FILENAME)",
		Short: "Print the last-applied configuration of objects, as kubectl apply view-last-applied",
		Example: `  kapply last-applied view deployment/web
  kapply last-applied view -f web.yaml -o json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLastAppliedView(cmd.Context(), getter, streams, args, opts)
		},
	}
	opts.files.add(cmd, "file naming the objects to view")
	cmd.Flags().StringVarP(&opts.output, "output", "o", "yaml", `"yaml", "json" or "kyaml"`)
	return cmd
}

func runLastAppliedView(ctx context.Context, getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, args []string, opts lastAppliedViewOptions) error {
	targets, err := known(load.ReadLive(ctx, getter, args, opts.files.options(streams.In)))
	if err != nil {
		return readFailed(err)
	}
	keys := viewKeys(getter)
	for _, t := range targets {
		k := keys(ctx, t.Obj)
		out, err := viewLastApplied(t.Obj, opts.output, k)
		if err != nil {
			return withCode(exitError, viewError(t, err))
		}
		if err := writeAll(streams.Out, out); err != nil {
			return withCode(exitError, err)
		}
	}
	return nil
}

// viewError is err, view's failure on t, naming t and its file (a record
// that cannot be read names neither), as one error: printError would print
// each error of a "%w: %w" on its own line. kubectl's sentence for an
// object without a record, which names it, stays as kubectl prints it.
func viewError(t *load.Object, err error) error {
	if errors.Is(err, lastapplied.ErrNoRecord) {
		return err
	}
	return apply.ErrorOf(t.Obj, t.Where(), err)
}

// lastAppliedSetOptions are the flags of `kapply last-applied set`.
type lastAppliedSetOptions struct {
	record           recordWriteFlags
	createAnnotation bool
}

func newLastAppliedSetCommand(getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var opts lastAppliedSetOptions
	cmd := &cobra.Command{
		Use:   "set -f FILENAME",
		Short: "Record the file as the last-applied configuration, changing nothing else, as kubectl apply set-last-applied",
		Example: `  kapply last-applied set -f web.yaml
  kapply last-applied set -f web.yaml --create-annotation`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runLastAppliedSet(cmd.Context(), getter, streams, opts)
		},
	}
	opts.record.add(cmd, "file with the objects whose record to set")
	cmd.Flags().BoolVar(&opts.createAnnotation, "create-annotation", false, "create the record on objects that have none")
	return cmd
}

func runLastAppliedSet(ctx context.Context, getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, opts lastAppliedSetOptions) error {
	write, run, err := opts.record.start(ctx, getter, streams.In)
	if err != nil {
		return err
	}
	results, err := run.applier.SetLastApplied(ctx, run.input(), apply.SetLastAppliedOptions{CreateMissing: opts.createAnnotation, RecordWrite: write})
	if err != nil {
		return writeFailed(err)
	}
	return printRecordResults(streams, results, write.DryRun, "configured")
}

// lastAppliedEditOptions are the flags of `kapply last-applied edit`.
type lastAppliedEditOptions struct {
	files        fileFlags
	fieldManager string
}

func newLastAppliedEditCommand(getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var opts lastAppliedEditOptions
	cmd := &cobra.Command{
		Use:     "edit (TYPE/NAME | -f FILENAME)",
		Short:   "Edit the last-applied configuration in $KUBE_EDITOR or $EDITOR, as kubectl apply edit-last-applied",
		Example: `  KUBE_EDITOR=nano kapply last-applied edit deployment/web`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLastAppliedEdit(cmd.Context(), getter, streams, args, opts)
		},
	}
	opts.files.add(cmd, "file naming the objects to edit")
	addFieldManagerFlag(cmd, &opts.fieldManager)
	return cmd
}

func runLastAppliedEdit(ctx context.Context, getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, args []string, opts lastAppliedEditOptions) error {
	targets, err := known(load.ReadLive(ctx, getter, args, opts.files.options(streams.In)))
	if err != nil {
		return readFailed(err)
	}
	applier, err := newApplier(getter, applierConfig{})
	if err != nil {
		return withCode(exitError, err)
	}
	// Each object is edited and written in turn, so one that fails (a bad
	// edit, a rejected write) does not stop the others: earlier ones are
	// written already.
	edit := func(record []byte) ([]byte, error) { return editInEditor(ctx, streams, record) }
	failed := 0
	for _, t := range targets {
		res := applier.EditLastApplied(ctx, t.Obj, t.Where(), edit, apply.EditLastAppliedOptions{FieldManager: opts.fieldManager})
		failed += printEach(streams, []apply.RecordResult{res}, kcluster.NoDryRun, "edited")
	}
	return someFailed(failed, len(targets), "could not be written")
}

// editInEditor writes content to a temporary file, runs $KUBE_EDITOR (or
// $EDITOR, or vi) on it through the shell, as kubectl does, and returns
// what was saved.
func editInEditor(ctx context.Context, streams genericiooptions.IOStreams, content []byte) ([]byte, error) {
	dir, err := os.MkdirTemp("", "kapply-edit-")
	if err != nil {
		return nil, fmt.Errorf("creating the file to edit: %w", err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "last-applied.yaml")
	if err := os.WriteFile(path, content, 0o600); err != nil {
		return nil, fmt.Errorf("writing the file to edit: %w", err)
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", editorCommand()+` "$1"`, "sh", path)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = streams.In, streams.Out, streams.ErrOut
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("running the editor %q: %w", editorCommand(), err)
	}
	edited, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the edited file: %w", err)
	}
	return edited, nil
}

func editorCommand() string {
	for _, env := range []string{"KUBE_EDITOR", "EDITOR"} {
		if e := strings.TrimSpace(os.Getenv(env)); e != "" {
			return e
		}
	}
	return "vi"
}

// printRecordResults prints a kubectl-style line per object, or its
// error; any failed write makes the exit code 1.
func printRecordResults(streams genericiooptions.IOStreams, results []apply.RecordResult, dryRun kcluster.DryRun, verb string) error {
	return someFailed(printEach(streams, results, dryRun, verb), len(results), "could not be written")
}

// addFieldManagerFlag is --field-manager of the commands that write only
// the record; kubectl's edit-last-applied default.
func addFieldManagerFlag(cmd *cobra.Command, fieldManager *string) {
	cmd.Flags().StringVar(fieldManager, "field-manager", apply.ClientSideFieldManager, "name recorded in managedFields for the record's writes")
}

// printEach is printRecordResults returning how many writes failed. The
// server's warnings come first, as kubectl prints them.
func printEach(streams genericiooptions.IOStreams, results []apply.RecordResult, dryRun kcluster.DryRun, verb string) int {
	warnings := newCommandWarnings(streams.ErrOut)
	suffix := dryRunSuffix(dryRun)
	failed := 0
	for _, res := range results {
		knowObjects(res.Live)
		warnings.print(res.Warnings)
		switch {
		case res.Err != nil:
			fmt.Fprintf(streams.ErrOut, "error: %v\n", res.Err)
			failed++
		case res.Unchanged:
			fmt.Fprintf(streams.Out, "%s unchanged%s\n", apply.ObjectName(res.Object), suffix)
		default:
			fmt.Fprintf(streams.Out, "%s %s%s\n", apply.ObjectName(res.Object), verb, suffix)
		}
	}
	return failed
}

func dryRunSuffix(dryRun kcluster.DryRun) string {
	switch dryRun {
	case kcluster.ClientDryRun:
		return " (dry run)"
	case kcluster.ServerDryRun:
		return " (server dry run)"
	}
	return ""
}

// writeAll writes b or reports why not.
func writeAll(w io.Writer, b []byte) error {
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	return nil
}
