package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/apply/prune"
	"github.com/kapply/kapply/pkg/check"
	"github.com/kapply/kapply/pkg/diff"
	"github.com/kapply/kapply/pkg/load"
	"github.com/kapply/kapply/pkg/plan"
)

// newPlanCommand is `kapply plan`: the plan apply would execute, saved
// for review and for `kapply apply --plan`.
func newPlanCommand(getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var opts applyOptions
	var out string
	var contexts fleetFlags
	cmd := &cobra.Command{
		Use:   "plan (-f FILENAME | -k DIRECTORY) -o PLAN_FILE",
		Short: "Save what apply would do, to review it and apply exactly that",
		Long: `Compute what "kapply apply" with the same arguments would do, write nothing to the
cluster, and save it as a plan file (JSON, apiVersion kapply.dev/v1alpha2, kind
Plan): the cluster, and per object the operation, its UID and resourceVersion, the
patch, and every changed field with its reason and owners. A table of the changes
is printed (to stderr when the plan goes to stdout).

"kapply apply --plan FILE" then executes exactly that plan: an object changed since
in a field the plan writes or reads is refused (with what changed), the others are
applied. Secret values are never in the file (salted digests only): give apply
--plan the same -f files, whose Secrets must still have the planned values.`,
		Example: `  # Save the plan of a tree, review it, apply exactly it
  kapply plan -f manifests/ -R -o plan.json
  kapply apply --plan plan.json -f manifests/ -R

  # A kustomization into a namespace; the plan on stdout, the table on stderr
  kapply plan -k overlays/prod -n shop -o - > plan.json

  # Server-side apply, with what --prune would delete from the ApplySet "web"
  kapply plan -f manifests/ -R -n shop --server-side --prune --applyset=web -o plan.json

  # Only the objects labelled app=web, with a chosen field manager
  kapply plan -f manifests/ -R -l app=web --field-manager=ci -o plan.json

  # One plan per context in one file (a PlanList); apply runs each in its own cluster
  kapply plan -f manifests/ -R --contexts 'prod-*' -o plans.json
  kapply apply --plan plans.json -f manifests/ -R --canary 1 --wave-size 5`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return contexts.run(cmd, getter, streams, fleetCommand{name: "plan", applier: opts.applierConfig,
				run: func(ctx context.Context, getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, run clusterRun) error {
					return runPlan(ctx, getter, streams, opts, out, run)
				}})
		},
	}
	// The server's field validation of the writes, as apply's; the plan keeps it.
	addValidateFlag(cmd, &opts.validate)
	contexts.add(cmd)
	contexts.collectPlans(&out, streams, true, false)
	flags := cmd.Flags()
	objectSource{&opts.filenames, &opts.recursive, &opts.kustomize, &opts.selector}.add(flags, "plan", "", selectorExample)
	flags.StringVarP(&out, "output", "o", "", `the plan file to write ("-" for stdout); required`)
	flags.StringVar(&opts.fieldManager, "field-manager", "", "field manager apply would write as (e.g. --field-manager=ci); the plan keeps it")
	flags.BoolVar(&opts.serverSide, "server-side", false, "plan server-side apply patches (e.g. --server-side), as apply --server-side; what each changes is computed locally and checked by apply --plan")
	flags.BoolVar(&opts.force, "force-conflicts", false, "with --server-side: take fields that other managers own, as apply --force-conflicts; the plan keeps it")
	flags.StringArrayVar(&opts.mergeKeys, "merge-key", nil, "merge a list of a kind by keys, as for apply (e.g. --merge-key 'Widget.example.com:spec.rules=name')")
	flags.StringVar(&opts.mergeKeyFile, "merge-keys-file", "", "YAML file declaring merge keys, as for apply (e.g. --merge-keys-file keys.yaml)")
	flags.StringVar(&opts.secretRecord, "secret-record", "redacted", `how Secrets' last-applied records keep values, as for apply (e.g. --secret-record=plain)`)
	flags.BoolVar(&opts.prune.enabled, "prune", false, "add what apply --prune would delete (e.g. --prune --applyset=web, or --prune -l app=web)")
	flags.StringVar(&opts.prune.applySet, "applyset", "", "the ApplySet to prune from, [RESOURCE[.GROUP]/]NAME (e.g. --applyset=web)")
	flags.StringSliceVar(&opts.prune.allowlist, "prune-allowlist", nil, "with --prune -l: the kinds to prune (e.g. --prune-allowlist=core/v1/ConfigMap)")
	opts.ignore.addFlags(flags) // the plan leaves what they name as live
	addCheckFlag(flags, &opts.check)
	return cmd
}

func runPlan(ctx context.Context, getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, opts applyOptions, out string, run clusterRun) error {
	if out == "" {
		return runFailed(errors.New("must specify -o FILE to write the plan to (- for stdout)"))
	}
	if opts.prune.enabled && opts.prune.applySet == "" && opts.selector == "" {
		return runFailed(errors.New("--prune needs --applyset or -l"))
	}
	if _, err := opts.ignore.load(); err != nil {
		return err // a malformed rule: a usage error (exit 2), as diff's
	}
	_, _, p, err := planFiles(ctx, getter, streams.In, opts, run)
	if err != nil {
		return runFailed(err)
	}
	table := streams.Out
	if out == "-" {
		table = streams.ErrOut
	}
	if keepFleetPlan(run, getter, p) {
		diff.WritePlanTable(table, p) // over several contexts, the plans are written together at the end
		return nil
	}
	if err := writePlan(out, streams.Out, p); err != nil {
		return runFailed(err)
	}
	diff.WritePlanTable(table, p)
	if out != "-" {
		fmt.Fprintf(table, "Plan saved to %s; apply it with: kapply apply --plan %s -f ...\n", out, out)
	}
	if n := printVerdicts(table, p); n > 0 {
		return deniedByCheck(n, "the plan keeps the verdicts")
	}
	return nil
}

// writePlan encodes p to path ("-": stdout), replacing the file only once
// the whole plan is written.
func writePlan(path string, stdout io.Writer, p *plan.Plan) error {
	return writePlanDocument(path, stdout, func(w io.Writer) error { return plan.Encode(w, p) })
}

// planFiles loads the files and plans them as apply with opts would run:
// the Applier and the input are returned for executing the plan. A plan
// some object of which could not be planned is an error (its objects
// named), not a partial plan: executing it would skip them silently.
func planFiles(ctx context.Context, getter *genericclioptions.ConfigFlags, stdin io.Reader, opts applyOptions, run clusterRun) (*apply.Applier, apply.Input, *plan.Plan, error) {
	if len(opts.filenames) == 0 && opts.kustomize == "" {
		return nil, apply.Input{}, nil, errors.New("must specify one of -f or -k")
	}
	secretRecord, err := parseSecretRecord(opts.secretRecord)
	if err != nil {
		return nil, apply.Input{}, nil, err
	}
	mergeKeys, err := parseMergeKeys(opts.mergeKeys, opts.mergeKeyFile)
	if err != nil {
		return nil, apply.Input{}, nil, err
	}
	namespace, enforce, err := getter.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, apply.Input{}, nil, fmt.Errorf("reading the namespace from kubeconfig: %w", err)
	}
	files := load.Files{Filenames: opts.filenames, Recursive: opts.recursive, Kustomize: opts.kustomize}
	applier, in, err := loadAndConnect(ctx, getter, stdin, files, opts.selector, applierConfig{mergeKeys: mergeKeys, parallel: opts.parallel}.withApplier(run))
	if err != nil {
		return nil, apply.Input{}, nil, err
	}
	validation, err := opts.fieldValidation()
	if err != nil {
		return nil, apply.Input{}, nil, err
	}
	// The plan keeps how its items are written (plan.Settings).
	planOpts := apply.PlanOptions{Write: apply.WriteOptions{Namespace: namespace, EnforceNamespace: enforce,
		FieldManager: opts.fieldManager, ServerSide: opts.serverSide, SecretRecord: secretRecord,
		ForceConflicts: opts.force, FieldValidation: validation},
		// A server-side apply's changes are computed locally, without a
		// request: Verify checks them on apply --plan.
		LocalServerSide: opts.serverSide,
		// Each item is kept as the file holds it once planned: the plan is
		// saved or executed, never rendered as a diff. --check needs each
		// item's merged object first (checkPlan saves the items after).
		Saved: !opts.check}
	if opts.prune.enabled {
		planOpts.Prune = &prune.Options{Selector: opts.selector, ApplySet: opts.prune.applySet, All: opts.prune.all, Allowlist: opts.prune.allowlist}
	}
	ignored, err := opts.ignore.forPlan()
	if err != nil {
		return nil, apply.Input{}, nil, err
	}
	setPlanIgnore(ignored, &planOpts)
	var checker func() (*check.Checker, error)
	if opts.check {
		checker = startCheck(ctx, getter)
	}
	p, err := applier.Plan(ctx, in, planOpts)
	ignored.Filter(p)
	if planErr := (*apply.PlanError)(nil); errors.As(err, &planErr) {
		return nil, apply.Input{}, nil, errors.Join(append(planErr.Errs, errors.New("no plan was made: fix the objects above and plan again"))...)
	}
	if err != nil {
		return nil, apply.Input{}, nil, err
	}
	if checker != nil {
		c, err := checker()
		if err == nil {
			err = c.Plan(ctx, p)
		}
		if err != nil {
			return nil, apply.Input{}, nil, err
		}
		for i := range p.Items {
			p.Items[i] = plan.Saved(p.Items[i])
		}
	}
	return applier, in, p, nil
}
