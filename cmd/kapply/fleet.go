package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/fleet"
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
	// planned are the contexts of a plan file (apply --plan of a PlanList
	// without --contexts): the run's contexts, in the file's order.
	planned []string
	// prepare, if set, runs once the clusters are known and before any
	// starts (a command reading or making their plans); its context is
	// the jobs'. Its error ends the run with nothing done (errDeclined:
	// the user said no).
	prepare func(ctx context.Context, clusters []fleet.Cluster) (context.Context, error)
	// conclude, if set, runs after the matrix with the run's error (a
	// command writing what its clusters collected) and returns the run's.
	conclude func(results []fleet.Result, err error) error
	// stdin shares the command's stdin among the clusters ("-f -").
	stdin func() io.Reader
}

// contextRun is a command's run function, given the kubeconfig flags and
// streams of one context, and a command whose Context() is that context's.
type contextRun func(cmd *cobra.Command, getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) error

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
}

// enabled says whether the flags ask for a run over several contexts.
func (f *fleetFlags) enabled() bool {
	return len(f.contexts) > 0 || f.allContexts || f.clustersFile != "" || len(f.planned) > 0
}

// rolloutFlags are the flags that mean something only over several
// contexts.
var rolloutFlags = []string{"max-parallel", "canary", "wave-size", "cluster-timeout", "fail-fast", "cluster-selector"}

// check refuses rollout flags without contexts, and negative counts.
func (f *fleetFlags) check(cmd *cobra.Command) error {
	if !f.enabled() {
		for _, name := range rolloutFlags {
			if cmd.Flags().Changed(name) {
				return fmt.Errorf("--%s needs --contexts, --all-contexts, --clusters-file or a plan file of several contexts", name)
			}
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

// run is a command's RunE: fn once as before, or with --contexts once per
// selected context, then the matrix of results; the exit code is the worst
// of the clusters'.
func (f *fleetFlags) run(cmd *cobra.Command, getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, fn contextRun) error {
	if err := f.check(cmd); err != nil {
		return flagError(cmd, err)
	}
	if !f.enabled() {
		return fn(cmd, getter, streams)
	}
	if getter.Context != nil && *getter.Context != "" {
		return flagError(cmd, errors.New("--contexts, --all-contexts and --clusters-file cannot be used with --context"))
	}
	clusters, err := f.clusters(getter)
	if err != nil {
		return withCode(failureCode(cmd), err)
	}
	keepRunningOnClosedOutput()
	if f.prepare != nil {
		ctx, err := f.prepare(cmd.Context(), clusters)
		if err != nil {
			return err
		}
		cmd.SetContext(ctx)
	}
	opts := fleet.Options{MaxParallel: f.maxParallel, Canary: f.canary, WaveSize: f.waveSize,
		ClusterTimeout: f.clusterTimeout, FailFast: f.failFast}
	results, out := f.runOver(cmd, getter, streams, clusters, opts, fn)
	err = out.finish(results)
	if f.conclude != nil {
		err = f.conclude(results, err)
	}
	return err
}

// runOver runs fn in each cluster with opts and returns their results and
// the run's output, its matrix not yet printed.
func (f *fleetFlags) runOver(cmd *cobra.Command, getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams,
	clusters []fleet.Cluster, opts fleet.Options, fn contextRun) ([]fleet.Result, *fleetOutput) {
	out := newFleetOutput(streams, len(clusters), jsonLinesRequested(cmd))
	if f.stdin == nil {
		f.stdin = out.stdin
	}
	out.stdin = f.stdin // read once for all the run's passes (apply --confirm plans, then applies)
	out.command = cmd.Name()
	opts.OnEvent = out.onEvent
	// The clusters share the OpenAPI documents they parse, by the hash
	// their servers list; the store ends with this pass.
	ctx := context.WithValue(cmd.Context(), sharedSchemasKey{}, schema.NewSharedDocuments())
	return fleet.Run(ctx, clusters, opts, f.job(cmd, getter, out, fn)), out
}

// jsonLinesRequested says whether the command's stdout is JSON lines that
// carry their context in a field, not a prefix: -o events, and status
// -o json (a line per context). plan's -o is a file.
func jsonLinesRequested(cmd *cobra.Command) bool {
	o := cmd.Flags().Lookup("output")
	if o == nil || cmd.Name() == "plan" {
		return false
	}
	return o.Value.String() == eventsOutput || (cmd.Name() == "status" && o.Value.String() == "json")
}

// job runs fn in one cluster: its own kubeconfig flags (the context
// overridden), streams prefixed with "[context] ", and a tally of the
// objects' outcomes that runApplyOn and runDelete fill.
func (f *fleetFlags) job(cmd *cobra.Command, getter *genericclioptions.ConfigFlags, out *fleetOutput, fn contextRun) fleet.Job {
	waits := waitRequested(cmd)
	return func(ctx context.Context, c fleet.Cluster) fleet.Outcome {
		streams := out.streamsFor(c.Context)
		tally := &fleetTally{}
		clusterCmd := *cmd // only its context differs; run functions read nothing else from it
		clusterCmd.SetContext(context.WithValue(ctx, fleetTallyKey{}, tally))
		err := fn(&clusterCmd, contextFlags(getter, c.Context, f.clusterTimeout, streams.ErrOut), streams)
		code := exitCode(err, streams.ErrOut)
		out.addStates(c.Context, tally.objectStates())
		outcome := fleet.Outcome{Counts: tally.counts(), Code: code, ClusterFailed: code >= failureCode(cmd)}
		outcome.Err = firstError(err, outcome.FirstFailure, code)
		if waits {
			outcome.Ready = map[bool]fleet.Readiness{true: fleet.NotReady, false: fleet.Ready}[outcome.ClusterFailed]
		}
		return outcome
	}
}

// softExit says whether the command's exit 1 means a finding (diff's
// differences, status's drift) rather than a failure.
func softExit(cmd *cobra.Command) bool {
	return cmd.Name() == "diff" || cmd.Name() == "status"
}

// failureCode is the command's exit code for a failure of its own.
func failureCode(cmd *cobra.Command) int {
	if softExit(cmd) {
		return exitError
	}
	return exitFailed
}

// waitRequested says whether the command waits for readiness (apply
// --wait): the matrix's ready column. The wrapper serves several commands
// and reads their flag by name, the one place it needs one of their
// options.
func waitRequested(cmd *cobra.Command) bool {
	f := cmd.Flags().Lookup("wait")
	return f != nil && f.Value.String() == "true" && cmd.Name() == "apply"
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

// sharedSchemasKey is the context key of a run's shared OpenAPI
// documents over several contexts.
type sharedSchemasKey struct{}

// sharedSchemas are the OpenAPI documents shared by the clusters of the
// run ctx belongs to; nil outside a run over several contexts.
func sharedSchemas(ctx context.Context) *schema.SharedDocuments {
	shared, _ := ctx.Value(sharedSchemasKey{}).(*schema.SharedDocuments)
	return shared
}

// fleetTallyKey is the context key of a cluster's fleetTally.
type fleetTallyKey struct{}

// fleetTally counts one cluster's object outcomes for the matrix.
type fleetTally struct {
	mu sync.Mutex
	c  fleet.Counts
	// states are the objects' states of a status run.
	states []objectState
}

func (t *fleetTally) objectStates() []objectState {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.states
}

func (t *fleetTally) counts() fleet.Counts {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.c
}

// tallyForFleet counts events into the cluster's tally when ctx is one
// cluster's of a run over several contexts; otherwise it does nothing.
func tallyForFleet(ctx context.Context, events []apply.Event) {
	t, ok := ctx.Value(fleetTallyKey{}).(*fleetTally)
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.c.Add(events)
}

// onceReader reads stdin once for all clusters ("-f -" in each): the first
// cluster to read takes it whole, and every cluster reads that copy.
type onceReader struct {
	read func() ([]byte, error)
	rest []byte
	init bool
}

func newStdinShare(in io.Reader) func() io.Reader {
	all := sync.OnceValues(func() ([]byte, error) { return io.ReadAll(in) })
	return func() io.Reader { return &onceReader{read: all} }
}

func (r *onceReader) Read(p []byte) (int, error) {
	if !r.init {
		data, err := r.read()
		if err != nil {
			return 0, err
		}
		r.rest, r.init = data, true
	}
	if len(r.rest) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.rest)
	r.rest = r.rest[n:]
	return n, nil
}
