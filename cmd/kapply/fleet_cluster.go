package main

import (
	"context"
	"sync"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/fleet"
	"github.com/kapply/kapply/pkg/plan"
	"github.com/kapply/kapply/pkg/schema"
)

// clusterRun is what a run over several contexts gives a command's run in
// one cluster, as an argument: the Applier pkg/fleet connected, the plan
// to execute and where the cluster's outcome is reported. Its zero value
// is a run in one context.
type clusterRun struct {
	// applier is the cluster's, built by the run's fleet.Factory; nil:
	// the command connects from its kubeconfig flags.
	applier *apply.Applier
	// given is the plan to execute (apply --plan of a PlanList, the second
	// pass of --confirm); nil: none given.
	given *plan.Plan
	// report collects the cluster's outcome; nil outside such a run.
	report *clusterReport
}

// clusterReport is one cluster's outcome as the matrix shows it: its
// objects' outcomes, the plan it made, its objects' states (status).
type clusterReport struct {
	mu       sync.Mutex
	counts   fleet.Counts
	plan     *plan.Plan
	statuses []apply.ObjectStatus
}

// addEvents counts events; a nil report (one context) counts nothing.
func (r *clusterReport) addEvents(events []apply.Event) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.counts.Add(events)
}

// keepPlan keeps the cluster's plan, counted by what it would do.
func (r *clusterReport) keepPlan(p *plan.Plan) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.plan, r.counts = p, fleet.CountPlan(p)
}

// setStatuses keeps how each object of the files stands in the cluster
// (status, Secret values masked); a nil report (one context) keeps
// nothing.
func (r *clusterReport) setStatuses(statuses []apply.ObjectStatus) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.statuses = statuses
}

// outcome is the report as pkg/fleet takes it.
func (r *clusterReport) outcome() fleet.Outcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	return fleet.Outcome{Counts: r.counts, Plan: r.plan, Statuses: r.statuses}
}

// fleetTargets builds, for a run over several contexts, each cluster's
// kubeconfig flags and streams once, shared by its Applier (Connect) and
// the command's run (Operation).
type fleetTargets struct {
	getter  *genericclioptions.ConfigFlags
	timeout time.Duration
	out     *fleetOutput
	mu      sync.Mutex
	byName  map[string]*fleetTarget
}

// fleetTarget is one cluster's kubeconfig flags and streams.
type fleetTarget struct {
	getter  *genericclioptions.ConfigFlags
	streams genericiooptions.IOStreams
}

// target is the cluster's flags and streams, made on first use; take
// drops them (the cluster is done) so that memory follows --max-parallel.
func (t *fleetTargets) target(context string, take bool) *fleetTarget {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byName == nil {
		t.byName = map[string]*fleetTarget{}
	}
	ft, ok := t.byName[context]
	if !ok {
		streams := t.out.streamsFor(context)
		ft = &fleetTarget{getter: contextFlags(t.getter, context, t.timeout, streams.ErrOut), streams: streams}
		t.byName[context] = ft
	}
	if take {
		delete(t.byName, context)
	}
	return ft
}

// connect is the run's fleet.Factory: the cluster's Applier from its
// kubeconfig flags, sharing the OpenAPI documents the clusters parse (by
// the hash their servers list). A cluster it fails for has its error
// printed as the command would print it.
func (t *fleetTargets) connect(c fleetCommand, shared *schema.SharedDocuments) fleet.Factory {
	return func(cluster fleet.Cluster) (*apply.Applier, error) {
		ft := t.target(cluster.Context, false)
		cfg, err := c.applier()
		if err == nil {
			cfg.sharedSchemas = shared
			var applier *apply.Applier
			if applier, err = newApplier(ft.getter, cfg); err == nil {
				return applier, nil
			}
		}
		t.target(cluster.Context, true)
		exitCode(withCode(failureCode(c.finding), err), ft.streams.ErrOut)
		return nil, err
	}
}

// operation runs c in each cluster with the Applier Connect built, and
// reports its exit code, counts and first error (given: the plans the
// clusters execute, one each).
func (t *fleetTargets) operation(c fleetCommand, given *plan.Set) fleet.Operation {
	return fleet.Func{Failure: failureCode(c.finding), Do: func(ctx context.Context, cluster fleet.Cluster, a *apply.Applier) fleet.Outcome {
		ft := t.target(cluster.Context, true)
		run := clusterRun{applier: a, report: &clusterReport{}}
		if given != nil {
			run.given, _ = given.For(cluster.Context) // prepare checked that each has its plan
		}
		err := c.run(ctx, ft.getter, ft.streams, run)
		code := exitCode(err, ft.streams.ErrOut)
		out := run.report.outcome()
		out.Code, out.Err = code, firstError(err, out.FirstFailure, code)
		if c.waits {
			out.Ready = map[bool]fleet.Readiness{true: fleet.NotReady, false: fleet.Ready}[code >= failureCode(c.finding)]
		}
		return out
	}}
}
