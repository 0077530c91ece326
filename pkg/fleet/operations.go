package fleet

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/delete"
	"github.com/kapply/kapply/pkg/plan"
)

// Exit codes of an Outcome, as kubectl's: a finding (diff, status) is 1
// and an error 2; for the other operations a failure is 1.
const (
	CodeFailed  = 1
	CodeFinding = 1
	CodeError   = 2
)

// Apply applies Input with Options in each cluster (Applier.Apply).
type Apply struct {
	Input   apply.Input
	Options apply.Options
}

func (op Apply) Run(ctx context.Context, _ Cluster, a *apply.Applier) Outcome {
	events, err := a.Apply(ctx, copyInput(op.Input), op.Options)
	return eventsOutcome(events, err)
}

func (Apply) FailureCode() int { return CodeFailed }

// Plan plans Input with Options in each cluster (Applier.Plan); each
// Result holds its cluster's Plan, named by its context, and counts what
// it would do.
type Plan struct {
	Input   apply.Input
	Options apply.PlanOptions
}

func (op Plan) Run(ctx context.Context, c Cluster, a *apply.Applier) Outcome {
	p, err := a.Plan(ctx, copyInput(op.Input), op.Options)
	if err != nil {
		return Outcome{Code: CodeFailed, Err: err}
	}
	p.Cluster.Context = c.Context
	return Outcome{Counts: CountPlan(p), Plan: p}
}

func (Plan) FailureCode() int { return CodeFailed }

// Diff is Plan whose exit says whether anything would change: 1 when some
// item is not unchanged (not a failure), 2 on an error.
type Diff Plan

func (op Diff) Run(ctx context.Context, c Cluster, a *apply.Applier) Outcome {
	out := Plan(op).Run(ctx, c, a)
	switch {
	case out.Err != nil:
		out.Code = CodeError
	case Changes(out.Plan):
		out.Code = CodeFinding
	}
	return out
}

func (Diff) FailureCode() int { return CodeError }

// Status reads how each object of Input stands in each cluster
// (Applier.Status): exit 1 when some object is not in step with its last
// apply, 2 on an error.
type Status struct {
	Input   apply.Input
	Options apply.StatusOptions
}

func (op Status) Run(ctx context.Context, _ Cluster, a *apply.Applier) Outcome {
	statuses, err := a.Status(ctx, copyInput(op.Input), op.Options)
	if err != nil {
		return Outcome{Code: CodeError, Err: err}
	}
	out := Outcome{Statuses: statuses}
	for _, s := range statuses {
		if !InStep(s) {
			out.Code = CodeFinding
		}
	}
	return out
}

func (Status) FailureCode() int { return CodeError }

// Delete deletes the objects of Input in each cluster (Applier.Delete).
type Delete struct {
	Input   apply.Input
	Options delete.Options
}

func (op Delete) Run(ctx context.Context, _ Cluster, a *apply.Applier) Outcome {
	events, err := a.Delete(ctx, copyInput(op.Input), op.Options)
	return eventsOutcome(events, err)
}

func (Delete) FailureCode() int { return CodeFailed }

// Execute executes, in each cluster, its context's plan of Plans (a
// PlanList made by Plan over the same contexts), checked against
// Options.Objects; a cluster without a plan there fails.
type Execute struct {
	Plans   *plan.Set
	Options apply.ExecuteOptions
}

func (op Execute) Run(ctx context.Context, c Cluster, a *apply.Applier) Outcome {
	p, ok := op.Plans.For(c.Context)
	if !ok {
		return Outcome{Code: CodeFailed, Err: fmt.Errorf("the plans hold none for context %q", c.Context)}
	}
	opts := op.Options
	opts.Objects = copyInput(opts.Objects)
	events, err := a.Execute(ctx, p, opts)
	return eventsOutcome(events, err)
}

func (Execute) FailureCode() int { return CodeFailed }

// eventsOutcome counts events; a failed object or err fails the cluster.
func eventsOutcome(events []apply.Event, err error) Outcome {
	out := Outcome{Events: events}
	out.Add(events)
	switch {
	case out.FirstFailure != nil:
		out.Code, out.Err = CodeFailed, out.FirstFailure
	case err != nil:
		out.Code, out.Err = CodeFailed, err
	case out.Failed > 0:
		out.Code = CodeFailed
	}
	return out
}

// copyInput gives each cluster its own objects: an Applier may default
// them (a namespace) while other clusters read the same input.
func copyInput(in apply.Input) apply.Input {
	objects := make([]*unstructured.Unstructured, len(in.Objects))
	for i, o := range in.Objects {
		objects[i] = o.DeepCopy()
	}
	in.Objects = objects
	return in
}

// CountPlan counts what p's items would do, as an apply's events would.
func CountPlan(p *plan.Plan) Counts {
	outcomes := map[plan.Action]apply.Outcome{plan.Create: apply.Created, plan.Update: apply.Configured,
		plan.Apply: apply.Configured, plan.Unchanged: apply.Unchanged, plan.Prune: apply.Pruned, plan.Delete: apply.Deleted}
	events := make([]apply.Event, len(p.Items))
	for i, it := range p.Items {
		events[i].Outcome = outcomes[it.Action]
	}
	var c Counts
	c.Add(events)
	return c
}

// Changes says whether p writes or deletes anything.
func Changes(p *plan.Plan) bool {
	for _, it := range p.Items {
		if it.Action != plan.Unchanged {
			return true
		}
	}
	return false
}

// InStep says whether an object stands as its last apply left it: on the
// server, with a record, no field changed or owned by another manager.
func InStep(s apply.ObjectStatus) bool {
	return s.State == apply.StateApplied && len(s.Changed) == 0 && len(s.Foreign) == 0
}
