package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kapply/kapply/pkg/apply"
	kcluster "github.com/kapply/kapply/pkg/cluster"
	"github.com/kapply/kapply/pkg/diff"
)

// adoptOptions are the flags of `kapply adopt`.
type adoptOptions struct {
	record recordWriteFlags
}

func newAdoptCommand(getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var opts adoptOptions
	cmd := &cobra.Command{
		Use:   "adopt -f FILENAME",
		Short: "Hand objects made imperatively (kubectl create, run, expose) over to the files: record each file as last-applied",
		Long: `Switch objects from imperative commands to declarative files. adopt records the
file as the last-applied configuration of each object that has none, exactly as
kapply apply would, and changes nothing else: the patch carries only the annotation
and the object's resourceVersion, so a concurrent write makes it fail instead.

For each object it prints the fields where the live object differs from the file:
what the next kapply apply will change. Objects that already have a record are
left alone (see kapply last-applied set). Secret values are masked.

A write the server refuses is reported and the other objects are still adopted;
the exit code is then 1.`,
		Example: `  # Export what kubectl create made, adopt it, and manage it with apply from now on
  kapply export deployment/web > web.yaml
  kapply adopt -f web.yaml --dry-run=client
  kapply adopt -f web.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runAdopt(cmd.Context(), getter, streams, opts)
		},
	}
	opts.record.add(cmd, "file, directory or URL with the objects to adopt")
	return cmd
}

func runAdopt(ctx context.Context, getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, opts adoptOptions) error {
	write, run, err := opts.record.start(ctx, getter, streams.In)
	if err != nil {
		return err
	}
	adoptions, err := run.applier.Adopt(ctx, run.input(), apply.AdoptOptions{RecordWrite: write})
	if err != nil {
		return writeFailed(err)
	}
	// A failed write does not stop the others: each is reported, and the
	// exit code says some failed.
	warnings := newCommandWarnings(streams.ErrOut)
	failed := 0
	for _, a := range adoptions {
		knowObjects(a.Live)
		warnings.print(a.Warnings)
		if a.Err != nil {
			fmt.Fprintf(streams.ErrOut, "error: %v\n", a.Err)
			failed++
			continue
		}
		reportAdoption(streams, a, write.DryRun)
	}
	return someFailed(failed, len(adoptions), "could not be adopted")
}

// reportAdoption prints an adoption and what the next apply changes,
// Secret values masked.
func reportAdoption(streams genericiooptions.IOStreams, a apply.Adoption, dryRun kcluster.DryRun) {
	if a.Skip != nil {
		fmt.Fprintf(streams.ErrOut, "%s skipped: %v (kapply last-applied set replaces it)\n", apply.ObjectName(a.Object), a.Skip)
		return
	}
	fmt.Fprintf(streams.Out, "%s adopted%s\n", apply.ObjectName(a.Object), dryRunSuffix(dryRun))
	if len(a.Changes) == 0 {
		fmt.Fprintln(streams.Out, "  the next apply changes nothing")
		return
	}
	fmt.Fprintln(streams.Out, "  the next apply changes:")
	for _, c := range a.Changes {
		old, new := showValue(c.Old), showValue(c.New)
		if len(c.Path) > 0 && diff.IsSecretValue(a.Object.Object, c.Path[0].Field) {
			old, new = diff.MaskChange(c.Old, c.New)
		}
		fmt.Fprintf(streams.Out, "    %s: %s -> %s (%s)\n", c.Path, old, new, c.Reason)
	}
}

// showValue prints a value compactly, as JSON; absent is "(none)".
func showValue(v any) string {
	if v == nil {
		return "(none)"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
