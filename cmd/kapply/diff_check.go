package main

import (
	"context"
	"errors"
	"strings"

	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/diff"
	"github.com/kapply/kapply/pkg/plan"
)

// checkDiff sets --check's verdicts on diff's plan. Without --local,
// diff's own server dry run runs the cluster's policies first: an object
// it denies is a failure of the plan, with no item in it. Where --check
// predicts that denial (the server's error names the policy a denied
// verdict names), the failure is the verdict instead: the object is
// compared as the plan would send it and its item joins p, so that diff
// exits 3 as with --local, not 2. Other failures stay errors.
func checkDiff(ctx context.Context, getter *genericclioptions.ConfigFlags, view *planView, p *plan.Plan, planErr *apply.PlanError) error {
	checker, err := loadChecker(ctx, getter)
	if err != nil {
		return err
	}
	if err := checker.Plan(ctx, p); err != nil {
		return err
	}
	if planErr == nil {
		return nil
	}
	kept := planErr.Errs[:0]
	for _, err := range planErr.Errs {
		f, ok := errors.AsType[*apply.PlanFailure](err)
		if !ok || f.Event.Item == nil || f.Event.Item.Merged == nil && f.Event.Item.Action != plan.Prune {
			kept = append(kept, err)
			continue
		}
		it := *f.Event.Item
		verdicts, cerr := checker.Item(ctx, it)
		if cerr != nil || !deniesAsServer(verdicts, f.Event.Err) {
			kept = append(kept, err)
			continue
		}
		it.Verdicts = verdicts
		p.Items = append(p.Items, it)
		view.add(f.Index, it, f.Event.Live)
	}
	planErr.Errs = kept
	return nil
}

// deniesAsServer reports whether a denied verdict names the policy the
// server's error names (the API server's "ValidatingAdmissionPolicy 'P'
// with binding 'B' denied request").
func deniesAsServer(verdicts []plan.Verdict, serverErr error) bool {
	if serverErr == nil {
		return false
	}
	for _, v := range verdicts {
		if v.Outcome == plan.Denied && strings.Contains(serverErr.Error(), "ValidatingAdmissionPolicy '"+v.Policy+"'") {
			return true
		}
	}
	return false
}

// withVerdicts sets each comparison's verdicts from its plan item: the
// view compared the items as they were planned, before the check.
func withVerdicts(comparisons []diff.Comparison, p *plan.Plan) {
	byID := map[plan.ID][]plan.Verdict{}
	for _, it := range p.Items {
		if len(it.Verdicts) > 0 {
			byID[it.ID] = it.Verdicts
		}
	}
	for i := range comparisons {
		if v, ok := byID[comparisons[i].Object.ID]; ok {
			comparisons[i].Object.Verdicts = v
		}
	}
}
