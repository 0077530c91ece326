package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/apply/prune"
	kcluster "github.com/kapply/kapply/pkg/cluster"
	"github.com/kapply/kapply/pkg/diff"
	"github.com/kapply/kapply/pkg/load"
	"github.com/kapply/kapply/pkg/plan"
)

// rollbackOptions are the flags of `kapply rollback`.
type rollbackOptions struct {
	applySet     string
	revision     int
	filenames    []string
	recursive    bool
	fieldManager string
	serverSide   bool
	force        bool
	gracePeriod  int
	timeout      time.Duration
	planOut      string
	review       reviewOptions
	history      historyFlags
}

func newRollbackCommand(getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var opts rollbackOptions
	cmd := &cobra.Command{
		Use:   "rollback --applyset NAME [--to-revision N] [-f SECRETS]",
		Short: "Bring an ApplySet back to one of its revisions",
		Long: `Plan bringing each member of an ApplySet back to the configuration a revision
recorded (see kapply history), by the same three-way merge as apply: fields other
writers set stay (an autoscaler's replicas, a controller's list element). Members
pruned since the revision are created again; members added since are pruned. The
plan is then executed as apply --plan executes one, and is itself a revision.

The default revision is the newest complete one before the newest (the state
before the last apply, or before an apply that was interrupted).

A revision keeps no Secret values: give the Secrets it names with -f, else the
rollback is refused naming them, with nothing written. A rollback that would
change an immutable field (a Deployment's selector, a Job's template) is refused
naming the field unless --force, which deletes and re-creates the object as
apply --force does.`,
		Example: `  kapply rollback --applyset web -n shop
  kapply rollback --applyset web -n shop --to-revision 3 -f secrets/
  kapply rollback --applyset web -n shop -i          # show the plan, ask, apply
  kapply rollback --applyset web -n shop -o rollback.json
  kapply apply --plan rollback.json --applyset web -n shop`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runRollback(cmd.Context(), getter, streams, opts)
		},
	}
	flags := cmd.Flags()
	flags.StringVar(&opts.applySet, "applyset", "", "the ApplySet, [RESOURCE[.GROUP]/]NAME (a Secret by default, in the -n namespace)")
	flags.IntVar(&opts.revision, "to-revision", 0, "the revision to go back to (0: the complete revision before the newest)")
	flags.StringSliceVarP(&opts.filenames, "filename", "f", nil, "files holding the values of the revision's Secrets (only those Secrets)")
	flags.BoolVarP(&opts.recursive, "recursive", "R", false, "process the directories of -f recursively")
	flags.StringVar(&opts.fieldManager, "field-manager", "", "field manager to write as, as for apply")
	flags.BoolVar(&opts.serverSide, "server-side", false, "write by server-side apply, as apply --server-side")
	flags.BoolVar(&opts.force, "force", false, "delete and re-create an object whose rollback changes an immutable field, as apply --force")
	flags.IntVar(&opts.gracePeriod, "grace-period", -1, "with --force: the deletion's grace period in seconds (-1: the object's own)")
	flags.DurationVar(&opts.timeout, "timeout", 0, "bound on waiting for CRDs, gates and --force's deletions (0: the defaults)")
	flags.StringVarP(&opts.planOut, "output", "o", "", `save the rollback's plan to this file ("-": stdout) instead of executing it; run it with kapply apply --plan`)
	flags.BoolVarP(&opts.review.confirm, "confirm", "i", false, "show the plan as a table and ask Continue? [y/N] on the terminal before writing")
	flags.BoolVar(&opts.review.yes, "yes", false, "with --confirm, do not ask")
	opts.history.add(flags)
	return cmd
}

func runRollback(ctx context.Context, getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, opts rollbackOptions) error {
	keepRunningOnClosedOutput()
	if err := opts.check(); err != nil {
		return withCode(exitError, err)
	}
	namespace, _, err := getter.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return runFailed(err)
	}
	var applier *apply.Applier
	var secrets apply.Input
	if len(opts.filenames) > 0 {
		files := load.Files{Filenames: opts.filenames, Recursive: opts.recursive}
		applier, secrets, err = loadAndConnect(ctx, getter, streams.In, files, "", applierConfig{})
		if err == nil && len(secrets.Errors) > 0 {
			err = errors.Join(secrets.Errors...)
		}
	} else {
		applier, err = newApplier(getter, applierConfig{})
	}
	if err != nil {
		return runFailed(err)
	}
	_, opts.history.user = runNames(getter)
	ref := apply.ApplySetRef{ApplySet: opts.applySet, Namespace: namespace, HistoryNamespace: opts.history.namespace}
	write := apply.WriteOptions{Namespace: namespace, FieldManager: opts.fieldManager, ServerSide: opts.serverSide}
	if opts.force {
		return rollbackForced(ctx, streams, opts, applier, ref, write, secrets)
	}
	p, err := applier.Rollback(ctx, ref, apply.RollbackOptions{Revision: opts.revision, Secrets: secrets, Write: write})
	if err != nil {
		return runFailed(err)
	}
	if opts.planOut != "" {
		table := streams.Out
		if opts.planOut == "-" {
			table = streams.ErrOut
		}
		if err := writePlan(opts.planOut, streams.Out, p); err != nil {
			return runFailed(err)
		}
		diff.WritePlanTable(table, p)
		if opts.planOut != "-" {
			historyNamespace := ""
			if opts.history.namespace != "" {
				historyNamespace = " --history-namespace " + opts.history.namespace
			}
			fmt.Fprintf(table, "Rollback plan saved to %s; apply it with: kapply apply --plan %s --applyset %s%s (and -f with the Secrets it names)\n",
				opts.planOut, opts.planOut, opts.applySet, historyNamespace)
		}
		return nil
	}
	if opts.review.confirm {
		diff.WritePlanTable(streams.Out, p)
		if !opts.review.yes && hasChanges(p) {
			if err := confirmed(streams); err != nil {
				return err
			}
		}
	}
	printer, err := newEventPrinter("", kcluster.NoDryRun)
	if err != nil {
		return runFailed(err)
	}
	runOpts := apply.Options{Timeout: opts.timeout}
	return executePlan(ctx, streams, opts.asApply(), runOpts, printer, applier, secrets, p, clusterRun{})
}

func (opts rollbackOptions) check() error {
	switch {
	case opts.applySet == "":
		return errors.New("--applyset is required")
	case opts.revision < 0:
		return fmt.Errorf("--to-revision %d: a revision is numbered from 1", opts.revision)
	case opts.force && (opts.planOut != "" || opts.review.confirm):
		return errors.New("--force cannot be reviewed (-o, --confirm): deleting and re-creating an object is not a plan item")
	case opts.review.yes && !opts.review.confirm:
		return errors.New("--yes needs --confirm")
	case opts.planOut != "" && opts.review.confirm:
		return errors.New("-o saves the plan without executing it: it cannot be used with --confirm")
	}
	return nil
}

// asApply are the apply options executePlan reads.
func (opts rollbackOptions) asApply() applyOptions {
	return applyOptions{history: opts.history, serverSide: opts.serverSide, fieldManager: opts.fieldManager,
		prune: pruneOptions{enabled: true, applySet: opts.applySet, cascade: "background"}}
}

// rollbackForced applies the revision's members as apply --force
// --prune --applyset does: an object whose patch the server refuses as
// invalid (an immutable field) is deleted and created again.
func rollbackForced(ctx context.Context, streams genericiooptions.IOStreams, opts rollbackOptions, applier *apply.Applier,
	ref apply.ApplySetRef, write apply.WriteOptions, secrets apply.Input) error {
	in, revision, err := applier.RollbackInput(ctx, ref, opts.revision, secrets)
	if err != nil {
		return runFailed(err)
	}
	h := opts.history.options(streams.ErrOut)
	if h.ChangeCause == "" {
		h.ChangeCause = fmt.Sprintf("rollback to revision %d", revision)
	}
	runOpts := apply.Options{Write: write, Timeout: opts.timeout,
		Prune: &prune.Options{ApplySet: opts.applySet, History: h, Cascade: metav1.DeletePropagationBackground},
		Force: &apply.ForceOptions{GracePeriod: opts.gracePeriod, Cascade: metav1.DeletePropagationBackground, OnBackup: func(obj *unstructured.Unstructured, _ plan.Source, path string) {
			fmt.Fprintf(streams.ErrOut, "kapply: saved %s to %s before deleting it for --force\n", apply.ObjectRef(obj), path)
		}}}
	printer, err := newEventPrinter("", kcluster.NoDryRun)
	if err != nil {
		return runFailed(err)
	}
	events, err := applier.Apply(ctx, in, runOpts)
	if err != nil {
		return runFailed(err)
	}
	if failed := printer.printRest(streams, events, nil); failed > 0 {
		return withCode(exitFailed, nil)
	}
	return nil
}
