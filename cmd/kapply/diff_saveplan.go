package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kapply/kapply/pkg/plan"
)

func addSavePlanFlag(flags *pflag.FlagSet, path *string) {
	flags.StringVar(path, "save-plan", "", "also write the plan this diff shows to FILE (kapply's plan document; Secret values as digests), for apply --plan")
}

// savePlan writes p, the plan diff rendered, to path ("" writes nothing)
// with the names the kubeconfig gives its cluster. The document goes to a
// temporary file renamed into place: an interrupted or failed write leaves
// no half plan behind to be applied.
func savePlan(getter *genericclioptions.ConfigFlags, path string, p *plan.Plan) error {
	if path == "" {
		return nil
	}
	if p == nil {
		p = &plan.Plan{}
	}
	p.Cluster.Context, p.Cluster.User = runNames(getter)
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("--save-plan: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := plan.Encode(tmp, p); err != nil {
		tmp.Close()
		return fmt.Errorf("--save-plan %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("--save-plan %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
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
