package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/fieldpath"
)

// releaseOptions are the flags of `kapply release`.
type releaseOptions struct {
	record recordWriteFlags
	fields []string
}

func newReleaseCommand(getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var opts releaseOptions
	cmd := &cobra.Command{
		Use:   "release (-f FILENAME | TYPE NAME... | TYPE/NAME...) --field PATH [--field PATH...]",
		Short: "Hand fields over from the files to imperative writers (kubectl scale, an autoscaler)",
		Long: `Remove fields from the last-applied configuration of the objects in the files,
so that the next apply leaves them to whoever writes them imperatively. Without
this, removing spec.replicas from a file under an autoscaler makes the next apply
delete it, and the Deployment drops to 1 replica.

Remove the field from the file too: a warning says when the file still sets it.
Field paths are dotted, with list elements chosen by key:
  spec.replicas
  spec.template.spec.containers[name=web].resources
  metadata.labels["app.kubernetes.io/version"]
Every path must be in each object's record; otherwise nothing is changed.
Objects on the server can be named instead of files (TYPE NAME..., TYPE/NAME...).`,
		Example: `  # Let an autoscaler own the replicas of the Deployment in web.yaml
  kapply release -f web.yaml --field spec.replicas --dry-run=client
  kapply release -f web.yaml --field spec.replicas
  kapply release deployment/web -n shop --field spec.replicas`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRelease(cmd.Context(), getter, streams, args, opts)
		},
	}
	opts.record.add(cmd, "file with the objects whose fields to release")
	cmd.Flags().StringArrayVar(&opts.fields, "field", nil, "field path to release, e.g. spec.replicas or spec.template.spec.containers[name=web].resources (repeatable)")
	return cmd
}

func runRelease(ctx context.Context, getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, args []string, opts releaseOptions) error {
	write, err := opts.record.write()
	if err != nil {
		return err
	}
	paths, err := parseFieldPaths(opts, args)
	if err != nil {
		return withCode(exitError, err)
	}
	run, err := opts.record.files.connectTargets(ctx, getter, streams.In, args, readFailed, applierConfig{})
	if err != nil {
		return err
	}
	releases, err := run.applier.Release(ctx, run.input(), apply.ReleaseOptions{Fields: paths, RecordWrite: write})
	if err != nil {
		return writeFailed(fmt.Errorf("%w; nothing was changed", err))
	}
	results := make([]apply.RecordResult, 0, len(releases))
	for _, r := range releases {
		if len(args) == 0 { // named on the server: no file to take a field back
			warnStillSet(streams, r)
		}
		results = append(results, r.RecordResult)
	}
	return printRecordResults(streams, results, write.DryRun, "released "+joinPaths(paths))
}

func parseFieldPaths(opts releaseOptions, args []string) ([]fieldpath.Path, error) {
	if len(opts.record.files.filenames) == 0 && len(args) == 0 {
		return nil, errors.New("must specify TYPE/NAME or -f FILENAME")
	}
	if len(opts.fields) == 0 {
		return nil, errors.New("must specify at least one --field")
	}
	paths := make([]fieldpath.Path, len(opts.fields))
	for i, f := range opts.fields {
		p, err := fieldpath.Parse(f)
		if err != nil {
			return nil, fmt.Errorf("reading --field: %w", err)
		}
		paths[i] = p
	}
	return paths, nil
}

// warnStillSet warns of released fields the file still sets.
func warnStillSet(streams genericiooptions.IOStreams, r apply.Release) {
	for _, p := range r.StillSet {
		fmt.Fprintf(streams.ErrOut, "Warning: %s: the file still sets %s, so the next apply takes it back; remove it from the file\n", apply.ObjectName(r.Object), p)
	}
}

func joinPaths(paths []fieldpath.Path) string {
	s := ""
	for i, p := range paths {
		if i > 0 {
			s += ", "
		}
		s += p.String()
	}
	return s
}
