package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kapply/kapply/pkg/check"
	"github.com/kapply/kapply/pkg/diff"
	"github.com/kapply/kapply/pkg/plan"
)

// addCheckFlag registers --check on plan, diff and apply.
func addCheckFlag(flags *pflag.FlagSet, enabled *bool) {
	flags.BoolVar(enabled, "check", false, "evaluate the cluster's ValidatingAdmissionPolicies on what each object's write would send (e.g. --check): a denial is shown and exits 3 (apply writes nothing); warnings are shown; see docs/check.md")
}

// startCheck reads the cluster's admission policies while the plan is
// made (most of what --check adds is these reads and compiling the
// policies); the function returned waits for them.
func startCheck(ctx context.Context, getter *genericclioptions.ConfigFlags) func() (*check.Checker, error) {
	type loaded struct {
		checker *check.Checker
		err     error
	}
	done := make(chan loaded, 1)
	go func() {
		checker, err := loadChecker(ctx, getter)
		done <- loaded{checker, err}
	}()
	return func() (*check.Checker, error) {
		l := <-done
		return l.checker, l.err
	}
}

func loadChecker(ctx context.Context, getter *genericclioptions.ConfigFlags) (*check.Checker, error) {
	cfg, err := getter.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	mapper, err := getter.ToRESTMapper()
	if err != nil {
		return nil, err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return check.Load(ctx, check.Clients{Kube: kube, Dynamic: dyn, Mapper: mapper})
}

// printVerdicts writes a line per denied, warned or unknown verdict
// (audited ones are kept in the plan only) and returns how many items a
// policy denies.
func printVerdicts(w io.Writer, p *plan.Plan) int {
	for _, it := range p.Items {
		for _, v := range it.Verdicts {
			if v.Outcome == plan.Audited {
				continue
			}
			fmt.Fprintf(w, "%s: %s: %s\n", diff.VerdictWords[v.Outcome], it.ID, diff.VerdictText(v))
		}
	}
	return len(p.DeniedItems())
}

// deniedByCheck is the error of a command whose plan a policy denies.
func deniedByCheck(n int, then string) error {
	return withCode(exitDenied, fmt.Errorf("--check: the cluster's admission policies deny %d object(s); %s", n, then))
}
