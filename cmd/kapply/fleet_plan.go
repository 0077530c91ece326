package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kapply/kapply/pkg/diff"
	"github.com/kapply/kapply/pkg/fleet"
	"github.com/kapply/kapply/pkg/plan"
)

// keepFleetPlan keeps p as its cluster's plan when run is one cluster's of
// a run over several contexts, and reports whether it did: the run writes
// them all at its end. p is named by the context and user the cluster ran
// through, and counted in the matrix by what it would do.
func keepFleetPlan(run clusterRun, getter *genericclioptions.ConfigFlags, p *plan.Plan) bool {
	if run.report == nil {
		return false
	}
	p.Cluster.Context, p.Cluster.User = runNames(getter)
	run.report.keepPlan(p)
	return true
}

// collectPlans makes a run over several contexts keep the plan each
// cluster makes (kapply plan -o, diff --save-plan) and write them to
// *path as one PlanList once every cluster has made its own; if one could
// not, nothing is written. required: a run without *path is refused
// before it starts.
func (f *fleetFlags) collectPlans(path *string, streams genericiooptions.IOStreams, required, finding bool) {
	f.prepare = func(context.Context, []fleet.Cluster) (*plan.Set, error) {
		if *path == "" && required {
			return nil, runFailed(errors.New("must specify -o FILE to write the plans to (- for stdout)"))
		}
		return nil, nil
	}
	f.conclude = func(results []fleet.Result, err error) error {
		if *path == "" {
			return err
		}
		set, missing := fleet.PlanSet(results)
		if missing > 0 {
			fmt.Fprintf(streams.ErrOut, "No plan was written to %s: %d of %d cluster(s) made none; fix them and plan again\n", *path, missing, len(results))
			return withCode(max(exitCodeOf(err), failureCode(finding)), err)
		}
		if werr := writePlanDocument(*path, streams.Out, func(w io.Writer) error { return plan.EncodeSet(w, set) }); werr != nil {
			return withCode(max(exitCodeOf(err), failureCode(finding)), werr)
		}
		fmt.Fprintf(streams.ErrOut, "Plans of %d context(s) saved to %s; apply them with: kapply apply --plan %s -f ...\n", len(set.Plans), *path, *path)
		return err
	}
}

// exitCodeOf is the exit code err stands for (0 for nil).
func exitCodeOf(err error) int {
	if err == nil {
		return 0
	}
	return exitCode(err, io.Discard)
}

// writePlanDocument writes a plan document with encode to path ("-":
// stdout), replacing the file only once the whole document is written.
func writePlanDocument(path string, stdout io.Writer, encode func(io.Writer) error) error {
	if path == "-" {
		return encode(stdout)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".kapply-plan-*")
	if err != nil {
		return fmt.Errorf("writing the plan: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := encode(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing the plan %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing the plan %s: %w", path, err)
	}
	return nil
}

// reviewAcross readies apply's reviewed run over several contexts: with
// --plan, each context's plan is read from the file (once, for all);
// with --confirm, every context is planned first. With --confirm the
// plans are shown, a table per context, and one answer asked for all.
// It returns peek, for apply to call before the run: a PlanList given
// with no context flag names the run's contexts (and --context one of
// them, run alone).
func (f *fleetFlags) reviewAcross(getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, opts *applyOptions, command func() fleetCommand) (peek func()) {
	var read *plan.Set
	peek = func() {
		if opts.review.planFile == "" || f.enabled() || (getter.Context != nil && *getter.Context != "") {
			return
		}
		// Only a PlanList is read here: one cluster's plan is read once,
		// when the run loads it.
		if kind, err := planDocumentKind(opts.review.planFile); err != nil || kind != plan.SetKind {
			return
		}
		if _, set, err := readPlanDocument(opts.review.planFile); err == nil && set != nil {
			read, f.planned = set, set.Contexts()
		}
		// Otherwise one cluster's plan, or an error the run tells.
	}
	f.prepare = func(ctx context.Context, clusters []fleet.Cluster) (*plan.Set, error) {
		if !opts.review.on() {
			return nil, nil
		}
		if err := opts.review.check(*opts); err != nil {
			return nil, runFailed(err) // refused once, before any cluster plans
		}
		set, err := read, error(nil)
		switch {
		case set == nil && opts.review.planFile != "":
			set, err = planSetFor(opts.review.planFile, clusters, streams.ErrOut)
		case set == nil:
			set, err = f.planAcross(ctx, getter, streams, *opts, command(), clusters)
		}
		if err != nil {
			return nil, err
		}
		if opts.review.confirm {
			if err := confirmAcross(streams, *opts, set); err != nil {
				return nil, err
			}
		}
		return set, nil
	}
	return peek
}

// readPlanDocument reads a plan document of either kind.
func readPlanDocument(path string) (*plan.Plan, *plan.Set, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the plan: %w", err)
	}
	defer f.Close()
	p, set, err := plan.DecodeAny(f)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, set, nil
}

// planSetFor reads the PlanList at path for clusters: each must have its
// plan there, or nothing starts; plans of contexts not picked are left
// unapplied, and said so.
func planSetFor(path string, clusters []fleet.Cluster, stderr io.Writer) (*plan.Set, error) {
	p, set, err := readPlanDocument(path)
	switch {
	case err != nil:
		return nil, runFailed(err)
	case p != nil:
		return nil, runFailed(fmt.Errorf("%s holds one cluster's plan (kind Plan, made without --contexts): apply it with --context, not over several contexts", path))
	}
	left, err := fleet.PlansFor(set, clusters)
	if missing, ok := errors.AsType[*fleet.MissingPlansError](err); ok {
		return nil, runFailed(fmt.Errorf("%s holds no plan for context(s) %s (its plans are for %s): nothing was applied; plan them with kapply plan --contexts",
			path, strings.Join(shownContexts(missing.Contexts), ", "), strings.Join(shownContexts(set.Contexts()), ", ")))
	}
	if len(left) > 0 {
		fmt.Fprintf(stderr, "Warning: %s: the plans of %d context(s) not picked are not applied: %s\n", path, len(left), strings.Join(shownContexts(left), ", "))
	}
	return set, nil
}

// shownContexts quotes each name that could forge a line (shownContext).
func shownContexts(names []string) []string {
	shown := make([]string, len(names))
	for i, name := range names {
		shown[i] = shownContext(name)
	}
	return shown
}

// planAcross plans apply in every cluster (apply --confirm over several
// contexts), at most --max-parallel at once, and returns the plans; if a
// cluster could not be planned, the matrix says which and nothing is
// applied anywhere.
func (f *fleetFlags) planAcross(ctx context.Context, getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, opts applyOptions, apply fleetCommand, clusters []fleet.Cluster) (*plan.Set, error) {
	planOnly := apply
	planOnly.run = func(ctx context.Context, getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, run clusterRun) error {
		_, _, p, err := planFiles(ctx, getter, streams.In, opts, run)
		if err != nil {
			return runFailed(err)
		}
		keepFleetPlan(run, getter, p)
		return nil
	}
	results, out := f.runOver(ctx, getter, streams, clusters, fleet.Options{MaxParallel: f.maxParallel, ClusterTimeout: f.clusterTimeout, FailFast: f.failFast}, planOnly, nil)
	set, missing := fleet.PlanSet(results)
	if missing > 0 {
		_ = out.finish(results) // the matrix names each failure; the error is the one below
		return nil, withCode(exitFailed, fmt.Errorf("%d of %d cluster(s) could not be planned: nothing was applied", missing, len(results)))
	}
	return set, nil
}

// confirmAcross shows each context's plan, a table per context (its lines
// prefixed as the run's), and asks once for all; no answer but yes ends
// the run with nothing written (errDeclined).
func confirmAcross(streams genericiooptions.IOStreams, opts applyOptions, set *plan.Set) error {
	asked := streams
	if opts.output != "" {
		asked.Out = streams.ErrOut // stdout is for the objects printed after the run
	}
	for _, e := range set.Plans {
		table := &prefixedLines{dst: asked.Out, prefix: contextPrefix(e.Context)}
		diff.WritePlanTable(table, e.Plan)
		if err := table.close(); err != nil {
			return runFailed(fmt.Errorf("showing the plans: %w", err))
		}
	}
	changed := countChanged(set)
	fmt.Fprintf(asked.Out, "Plans of %d context(s), %d with changes.\n", len(set.Plans), changed)
	if opts.review.yes || changed == 0 {
		return nil
	}
	return confirmed(asked)
}

// countChanged is how many of the set's plans write or delete.
func countChanged(set *plan.Set) int {
	n := 0
	for _, e := range set.Plans {
		if hasChanges(e.Plan) {
			n++
		}
	}
	return n
}
