package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kapply/kapply/pkg/fleet"
	"github.com/kapply/kapply/pkg/plan"
	"github.com/kapply/kapply/pkg/schema"
)

// fleetFlags are the flags that run a command over many contexts: which
// contexts, and the rollout's control.
type fleetFlags struct {
	contexts       []string
	allContexts    bool
	clustersFile   string
	selector       string
	maxParallel    int
	canary         int
	waveSize       int
	clusterTimeout time.Duration
	failFast       bool
	// rollout are the flags that mean something only over several
	// contexts, kept as defined to tell whether one was given.
	rollout []*pflag.Flag
	// planned are the contexts of a plan file (apply --plan of a PlanList
	// without --contexts): the run's contexts, in the file's order.
	planned []string
	// prepare, if set, runs once the clusters are known and before any
	// starts (a command reading or making their plans) and returns the
	// plans the clusters execute, if any. Its error ends the run with
	// nothing done (errDeclined: the user said no).
	prepare func(ctx context.Context, clusters []fleet.Cluster) (*plan.Set, error)
	// conclude, if set, runs after the matrix with the run's error (a
	// command writing the plans its clusters made) and returns the run's.
	conclude func(results []fleet.Result, err error) error
	// stdin shares the command's stdin among the clusters ("-f -").
	stdin func() io.Reader
}

// fleetCommand is what a command gives a run over several contexts: how
// it runs in one cluster, and how its outcome reads.
type fleetCommand struct {
	// name names the command in -o events lines.
	name string
	// finding: exit 1 is a finding (diff's differences, status's drift),
	// not a failure.
	finding bool
	// jsonLines: stdout is JSON lines that carry their context in a field,
	// not a prefix (-o events; status -o json).
	jsonLines bool
	// waits: apply --wait, the matrix's ready column.
	waits bool
	// applier is how each cluster's Applier is built (merge keys, --parallel).
	applier func() (applierConfig, error)
	// run runs the command in one cluster.
	run contextRun
}

// contextRun is a command's run in one context: its kubeconfig flags,
// streams, and what a run over several contexts gives it (nothing
// outside one).
type contextRun func(ctx context.Context, getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, run clusterRun) error

func (f *fleetFlags) add(cmd *cobra.Command) {
	flags := cmd.Flags()
	flags.StringSliceVar(&f.contexts, "contexts", nil, `run in each of these kubeconfig contexts: a comma list of names, globs ('prod-*') or regular expressions ('re:prod-.*'); every other flag (-n too) applies in each`)
	flags.BoolVar(&f.allContexts, "all-contexts", false, "run in every context of the kubeconfig (or of --clusters-file)")
	flags.StringVar(&f.clustersFile, "clusters-file", "", "YAML file listing contexts and their labels ('clusters: [{context: prod-eu, labels: {region: eu}}]'); runs in each of them, or those --contexts and --cluster-selector pick")
	flags.StringVar(&f.selector, "cluster-selector", "", "with --clusters-file: only the clusters whose labels match this selector (region=eu,tier!=dev)")
	flags.IntVar(&f.maxParallel, "max-parallel", 10, "with several contexts: how many clusters run at once")
	flags.IntVar(&f.canary, "canary", 0, "with several contexts: run in the first N clusters alone first (with --wait, until ready); if one fails, the others are not started")
	flags.IntVar(&f.waveSize, "wave-size", 0, "with several contexts: after the canary, start clusters in waves of N, each when the previous wave finished; 0: one wave")
	addDurationFlag(flags, &f.clusterTimeout, "cluster-timeout", 0, "with several contexts: how long each cluster may take (a hung server fails its cluster, not the run); 0: no limit")
	flags.BoolVar(&f.failFast, "fail-fast", false, "with several contexts: start no more clusters after one failed (those are reported not started)")
	for _, name := range []string{"max-parallel", "canary", "wave-size", "cluster-timeout", "fail-fast", "cluster-selector"} {
		f.rollout = append(f.rollout, flags.Lookup(name))
	}
}

// enabled says whether the flags ask for a run over several contexts.
func (f *fleetFlags) enabled() bool {
	return len(f.contexts) > 0 || f.allContexts || f.clustersFile != "" || len(f.planned) > 0
}

// check refuses rollout flags without contexts, and negative counts.
func (f *fleetFlags) check() error {
	for _, flag := range f.rollout {
		if flag.Changed && !f.enabled() {
			return fmt.Errorf("--%s needs --contexts, --all-contexts, --clusters-file or a plan file of several contexts", flag.Name)
		}
	}
	switch {
	case f.selector != "" && f.clustersFile == "":
		return errors.New("--cluster-selector needs --clusters-file")
	case f.maxParallel < 1:
		return fmt.Errorf("--max-parallel must be at least 1, not %d", f.maxParallel)
	case f.canary < 0 || f.waveSize < 0 || f.clusterTimeout < 0:
		return errors.New("--canary, --wave-size and --cluster-timeout cannot be negative")
	}
	return nil
}

// run is a command's RunE: c.run once as before, or with --contexts once
// per selected context through pkg/fleet, then the matrix of results; the
// exit code is the worst of the clusters'.
func (f *fleetFlags) run(cmd *cobra.Command, getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, c fleetCommand) error {
	if err := f.check(); err != nil {
		return flagError(cmd, err)
	}
	if !f.enabled() {
		return c.run(cmd.Context(), getter, streams, clusterRun{})
	}
	if getter.Context != nil && *getter.Context != "" {
		return flagError(cmd, errors.New("--contexts, --all-contexts and --clusters-file cannot be used with --context"))
	}
	clusters, err := f.clusters(getter)
	if err != nil {
		return withCode(failureCode(c.finding), err)
	}
	keepRunningOnClosedOutput()
	var given *plan.Set
	if f.prepare != nil {
		if given, err = f.prepare(cmd.Context(), clusters); err != nil {
			return err
		}
	}
	opts := fleet.Options{MaxParallel: f.maxParallel, Canary: f.canary, WaveSize: f.waveSize,
		ClusterTimeout: f.clusterTimeout, FailFast: f.failFast}
	results, out := f.runOver(cmd.Context(), getter, streams, clusters, opts, c, given)
	err = out.finish(results)
	if f.conclude != nil {
		err = f.conclude(results, err)
	}
	return err
}

// runOver runs c in each cluster with opts (given: the plans they
// execute) and returns their results and the run's output, its matrix not
// yet printed.
func (f *fleetFlags) runOver(ctx context.Context, getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams,
	clusters []fleet.Cluster, opts fleet.Options, c fleetCommand, given *plan.Set) ([]fleet.Result, *fleetOutput) {
	out := newFleetOutput(streams, len(clusters), c.jsonLines)
	if f.stdin == nil {
		f.stdin = out.stdin
	}
	out.stdin = f.stdin // read once for all the run's passes (apply --confirm plans, then applies)
	out.command = c.name
	opts.OnEvent = out.onEvent
	targets := &fleetTargets{getter: getter, timeout: f.clusterTimeout, out: out}
	return fleet.Run(ctx, fleet.Config{
		Clusters:  clusters,
		Options:   opts,
		Connect:   targets.connect(c, schema.NewSharedDocuments()),
		Operation: targets.operation(c, given),
	}), out
}

// failureCode is the command's exit code for a failure of its own.
func failureCode(finding bool) int {
	if finding {
		return exitError
	}
	return exitFailed
}

// firstError is the cluster's first error: its first failed object's,
// else the run's own.
func firstError(err error, firstFailure error, code int) error {
	var coded *codedError
	switch {
	case err == nil:
		return nil
	case firstFailure != nil:
		return firstFailure
	case errors.As(err, &coded) && coded.err == nil:
		return fmt.Errorf("exit status %d", code)
	}
	return err
}
