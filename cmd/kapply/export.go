package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/diff"
	"github.com/kapply/kapply/pkg/export"
	"github.com/kapply/kapply/pkg/load"
	"github.com/kapply/kapply/pkg/secretmask"
)

// exportOptions are the flags of `kapply export`.
type exportOptions struct {
	output      string
	showSecrets bool
}

func newExportCommand(getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var opts exportOptions
	cmd := &cobra.Command{
		Use:   "export (TYPE/NAME... | TYPE NAME...)",
		Short: "Write live objects as clean configuration files",
		Long: `Print live objects as configuration files to keep and apply: without status,
without what the server sets in metadata (uid, resourceVersion, managedFields,
creationTimestamp, generation, selfLink, the last-applied record), and without the
server defaults kapply knows for Deployments, StatefulSets, DaemonSets, Pods and
other workloads' pod templates, and Services, where the value is the default.
A note on stderr lists the kept fields that may still be defaults.

A Secret's values are masked ("***"), so the output is safe to show but not
to apply (the server refuses "***" as base64 data); --show-secrets writes
them, for a file you keep where secrets may be kept.

The first step of moving an object made with kubectl create to files; then
kapply adopt records the file, and kapply apply manages the object.`,
		Example: `  kapply export deployment/web service/web > web.yaml
  kapply adopt -f web.yaml`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExport(cmd.Context(), getter, streams, args, opts)
		},
	}
	cmd.Flags().StringVarP(&opts.output, "output", "o", "yaml", `"yaml", "json" or "kyaml"`)
	cmd.Flags().BoolVar(&opts.showSecrets, "show-secrets", false, "write the values of Secrets instead of masks")
	return cmd
}

func runExport(ctx context.Context, getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, args []string, opts exportOptions) error {
	printer := objectPrinter(opts.output)
	if printer == nil {
		return withCode(exitError, fmt.Errorf(`--output must be "yaml", "json" or "kyaml", not %q`, opts.output))
	}
	targets, err := known(load.ReadLive(ctx, getter, args, load.Files{}))
	if err != nil {
		return readFailed(err)
	}
	for _, t := range targets {
		clean, notes := export.Export(t.Obj)
		if !opts.showSecrets && secretmask.IsSecret(clean.Object) {
			clean.Object = diff.MaskSecret(clean.Object)
			notes = append(notes, fmt.Sprintf("%s: the values are masked; --show-secrets writes them", apply.ObjectName(t.Obj)))
		}
		for _, n := range notes {
			fmt.Fprintf(streams.ErrOut, "note: %s\n", n)
		}
		if err := printer.PrintObj(clean, streams.Out); err != nil {
			return withCode(exitError, fmt.Errorf("printing %s: %w", apply.ObjectName(t.Obj), err))
		}
	}
	return nil
}
