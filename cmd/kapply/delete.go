package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/delete"
)

// deleteOptions are the flags of `kapply delete`.
type deleteOptions struct {
	filenames      []string
	recursive      bool
	kustomize      string
	selector       string
	cascade        string
	wait           bool
	timeout        time.Duration
	ignoreNotFound bool
	dryRun         string
	parallel       int
	output         string
}

func newDeleteCommand(getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var opts deleteOptions
	var contexts fleetFlags
	cmd := &cobra.Command{
		Use:   "delete (-f FILENAME | -k DIRECTORY | TYPE NAME... | TYPE/NAME... | TYPE -l SELECTOR)",
		Short: "Delete the objects the files declare, dependents before Namespaces and CRDs",
		Long: `Delete every object the files declare. Objects inside Namespaces and custom
resources go first, then CustomResourceDefinitions, then Namespaces, so a tree
holding a CRD, its custom resources and a Namespace is removed in one run.

Instead of files, objects on the server can be named as kubectl delete names
them: TYPE NAME..., TYPE/NAME..., or TYPE with -l SELECTOR, in the namespace of
-n (or the kubeconfig's).`,
		Example: `  # Delete a tree
  kapply delete -f manifests/ -R

  # Delete and wait until everything is gone, ignoring what is already gone
  kapply delete -f manifests/ -R --wait --ignore-not-found

  # Show what would be deleted
  kapply delete -f manifests/ -R --dry-run=server

  # Delete objects by name, or every ConfigMap labelled app=web
  kapply delete configmap/a secret/b -n shop
  kapply delete configmaps -l app=web -n shop

  # Results as JSON lines (docs/events.md)
  kapply delete -f manifests/ -R --wait -o events`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return contexts.run(cmd, getter, streams, fleetCommand{name: "delete", jsonLines: opts.output == eventsOutput,
				applier: func() (applierConfig, error) { return applierConfig{parallel: opts.parallel}, nil },
				run: func(ctx context.Context, getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, run clusterRun) error {
					return runDelete(ctx, getter, streams, args, opts, run)
				}})
		},
	}
	contexts.add(cmd)
	flags := cmd.Flags()
	objectSource{&opts.filenames, &opts.recursive, &opts.kustomize, &opts.selector}.add(flags, "delete", "", "")
	flags.StringVar(&opts.cascade, "cascade", "background", `how dependents go: "background", "foreground" or "orphan"`)
	flags.BoolVar(&opts.wait, "wait", false, "wait until each object is gone (bounded by --timeout)")
	addDurationFlag(flags, &opts.timeout, "timeout", time.Minute, "how long --wait waits for each object; 0: with no limit (a week, as kubectl)")
	flags.BoolVar(&opts.ignoreNotFound, "ignore-not-found", false, "treat objects that do not exist as deleted")
	addDryRunFlag(cmd, &opts.dryRun, `"none", "client" (only print what would be deleted; also a bare --dry-run, deprecated as in kubectl) or "server" (the server's dry run)`)
	flags.IntVar(&opts.parallel, "parallel", apply.DefaultParallel, "how many objects to delete at once")
	flags.StringVarP(&opts.output, "output", "o", "", `"name" (print resource/name, as kubectl) or "events" (a JSON object per line, docs/events.md)`)
	return cmd
}

func runDelete(ctx context.Context, getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, args []string, opts deleteOptions, run clusterRun) (err error) {
	keepRunningOnClosedOutput()
	runOpts, err := opts.toRun(getter, args)
	if err != nil {
		return runFailed(err)
	}
	printer, err := newDeletePrinter(opts.output, runOpts.DryRun)
	if err != nil {
		return runFailed(err)
	}
	defer printer.startEvents(streams.Out, "delete", runOpts.DryRun).finishInto(&err)
	applier, in, err := opts.connect(ctx, getter, streams.In, args, run)
	if nothingToDelete(streams.Out, err, printer) {
		return nil
	}
	if err != nil {
		return runFailed(err)
	}
	events, err := applier.Delete(ctx, in, runOpts)
	run.report.addEvents(events)
	if err != nil {
		return runFailed(err)
	}
	if printer.print(streams, events) > 0 {
		return withCode(exitFailed, nil)
	}
	return nil
}

func (opts deleteOptions) toRun(getter *genericclioptions.ConfigFlags, args []string) (delete.Options, error) {
	if len(opts.filenames) == 0 && opts.kustomize == "" && len(args) == 0 {
		return delete.Options{}, fmt.Errorf("must specify one of -f or -k")
	}
	dryRun, err := parseDryRun(opts.dryRun)
	if err != nil {
		return delete.Options{}, err
	}
	cascade, err := parseCascade(opts.cascade)
	if err != nil {
		return delete.Options{}, err
	}
	namespace, enforce, err := getter.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return delete.Options{}, fmt.Errorf("reading the namespace from kubeconfig: %w", err)
	}
	return delete.Options{
		Namespace:        namespace,
		EnforceNamespace: enforce,
		Cascade:          cascade,
		Wait:             opts.wait,
		Timeout:          opts.waitTimeout(),
		IgnoreNotFound:   opts.ignoreNotFound,
		DryRun:           dryRun,
	}, nil
}

// waitTimeout is --timeout; 0 means a week, kubectl delete's "wait
// forever", where the library would read it as its default, a minute.
func (opts deleteOptions) waitTimeout() time.Duration {
	if opts.timeout == 0 {
		return 7 * 24 * time.Hour
	}
	return opts.timeout
}
