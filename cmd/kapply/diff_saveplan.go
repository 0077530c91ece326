package main

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kapply/kapply/pkg/plan"
)

func addSavePlanFlag(flags *pflag.FlagSet, path *string) {
	flags.StringVar(path, "save-plan", "", "also write the plan this diff shows to FILE (kapply's plan document; Secret values as digests), for apply --plan")
}

// savePlan writes p, the plan diff rendered, to path ("" writes nothing)
// with the names the kubeconfig gives its cluster, as kapply plan does
// (writePlan: no half plan is ever left to be applied).
func savePlan(run clusterRun, getter *genericclioptions.ConfigFlags, path string, p *plan.Plan) error {
	switch {
	case path == "":
		return nil
	case path == "-":
		return errors.New("--save-plan needs a file: stdout carries the diff")
	case p == nil:
		p = &plan.Plan{}
	}
	if keepFleetPlan(run, getter, p) {
		return nil // over several contexts, the plans are written together at the end
	}
	p.Cluster.Context, p.Cluster.User = runNames(getter)
	if err := writePlan(path, nil, p); err != nil {
		return fmt.Errorf("--save-plan: %w", err)
	}
	return nil
}

// runNames are the context and user the run talks through, for
// people reading a plan (a plan matches its cluster by server and ID).
func runNames(getter *genericclioptions.ConfigFlags) (context, user string) {
	raw, err := getter.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return "", ""
	}
	context = raw.CurrentContext
	if getter.Context != nil && *getter.Context != "" {
		context = *getter.Context
	}
	if c, ok := raw.Contexts[context]; ok {
		user = c.AuthInfo
	}
	if getter.AuthInfoName != nil && *getter.AuthInfoName != "" {
		user = *getter.AuthInfoName
	}
	return context, user
}
