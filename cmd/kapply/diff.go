package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/diff"
	"github.com/kapply/kapply/pkg/ignore"
	"github.com/kapply/kapply/pkg/load"
)

// Environment variables naming an external diff program; kapply's wins.
const (
	kapplyExternalDiff  = "KAPPLY_EXTERNAL_DIFF"
	kubectlExternalDiff = "KUBECTL_EXTERNAL_DIFF"
)

// diffOptions are the flags of `kapply diff`.
type diffOptions struct {
	filenames    []string
	recursive    bool
	kustomize    string
	selector     string
	fieldManager string
	mergeKeys    []string
	mergeKeyFile string
	parallel     int
	chunkSize    int64
	dryRun       string
	local        bool
	serverSide   bool
	force        bool
	color        string
	showManaged  bool
	showSecrets  bool
	explain      bool
	summary      bool
	savePlan     string
	prune        pruneOptions
	ignore       ignoreOptions
	output       diffOutput
	check        bool // --check (check.go)
}

func newDiffCommand(getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var opts diffOptions
	var contexts fleetFlags
	cmd := &cobra.Command{
		Use:   "diff (-f FILENAME | -k DIRECTORY)",
		Short: "Show what apply would change, and why",
		Long: `Show, for each object in the files, what "kapply apply" with the same arguments
would change: a unified diff of the live object against the result, computed from
the same three-way merge plan apply uses. By default the result is the server's
dry run of the planned patch or create, so defaulting and admission show, as in
kubectl diff; --dry-run=client (or --local) computes it locally and needs only
read access.

Fields every write changes (managedFields, resourceVersion, generation, the
last-applied annotations) are hidden unless --show-managed-fields; Secret values are
masked unless --show-secrets. --explain adds, after each diff, every changed field
with its reason (set by file, removed from file, kept: not managed by the file)
and the manager that owns it now. --summary prints one line per object.

KAPPLY_EXTERNAL_DIFF (or KUBECTL_EXTERNAL_DIFF) names a program run on two
directories, LIVE and MERGED, with a file per object, as kubectl does.

--save-plan FILE also writes the plan the diff shows (kapply's versioned plan
document; Secret values only as digests), even when some objects failed.

Exit status: 0 no differences, 1 differences, 2 or more an error (also when some
objects were diffed and others failed).`,
		Example: `  # What would applying this tree change?
  kapply diff -f manifests/ -R

  # Computed locally, one line per object
  kapply diff -f manifests/ -R --local --summary

  # Why does each field change, and who owns it now?
  kapply diff -f deployment.yaml --explain

  # Also show what apply --prune would delete from the ApplySet "web"
  kapply diff -f manifests/ -R -n shop --prune --applyset=web

  # Save the plan this diff shows, to review and apply later
  kapply diff -f manifests/ -R --save-plan plan.json

  # With your own diff program
  KAPPLY_EXTERNAL_DIFF="meld" kapply diff -k overlays/prod

  # A pull request comment (cut to 65,000 bytes), and in GitHub Actions the job
  # summary and an error annotation on the document of each failed object
  kapply diff -f manifests/ -R -o markdown --github > comment.md

  # A report to open in a browser: filters, collapsible diffs, reasons
  kapply diff -f manifests/ -R -o html > report.html

  # What would change, a JSON object per object and a summary (docs/events.md)
  kapply diff -f manifests/ -R -o events | jq -c 'select(.differs) | [.object.name, .changedPaths]'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return contexts.run(cmd, getter, streams, fleetCommand{name: "diff", finding: true, jsonLines: opts.output.format == eventsOutput, applier: opts.applierConfig,
				run: func(ctx context.Context, getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, run clusterRun) error {
					return runDiff(ctx, getter, streams, opts, run)
				}})
		},
	}
	contexts.add(cmd)
	contexts.collectPlans(&opts.savePlan, streams, false, true)
	flags := cmd.Flags()
	objectSource{&opts.filenames, &opts.recursive, &opts.kustomize, &opts.selector}.add(flags, "diff", "", selectorExample)
	flags.StringVar(&opts.fieldManager, "field-manager", "", fmt.Sprintf("field manager of the dry-run writes, as apply would use it (default %q, or %q with --server-side)", apply.ClientSideFieldManager, apply.ServerSideFieldManager))
	flags.StringArrayVar(&opts.mergeKeys, "merge-key", nil, "merge a list of a kind by keys, as for apply (repeatable; see docs/merge-keys.md)")
	flags.StringVar(&opts.mergeKeyFile, "merge-keys-file", "", "YAML file declaring merge keys for lists of custom resources (see docs/merge-keys.md)")
	flags.IntVar(&opts.parallel, "parallel", apply.DefaultParallel, "how many objects to diff at once")
	flags.IntVar(&opts.parallel, "concurrency", apply.DefaultParallel, "the same as --parallel (kubectl diff's name)")
	addChunkSizeFlag(cmd, &opts.chunkSize)
	flags.BoolVar(&opts.serverSide, "server-side", false, "compute the result as apply --server-side would: the server's dry run of the apply patch")
	flags.BoolVar(&opts.force, "force-conflicts", false, "with --server-side: take fields that other managers own, as apply --force-conflicts would")
	flags.StringVar(&opts.dryRun, "dry-run", "server", `how the result is computed: "server" (the server's dry run) or "client" (locally)`)
	flags.BoolVar(&opts.local, "local", false, `compute the result locally; the same as --dry-run=client`)
	flags.StringVar(&opts.color, "color", "auto", `colour the diff: "auto" (when stdout is a terminal and NO_COLOR is unset), "always" or "never"`)
	flags.BoolVar(&opts.showManaged, "show-managed-fields", false, "show managedFields, resourceVersion, generation and the last-applied annotations")
	flags.BoolVar(&opts.showManaged, "show-managed", false, "the same as --show-managed-fields")
	flags.BoolVar(&opts.showSecrets, "show-secrets", false, "show the values of Secrets instead of masks")
	flags.BoolVar(&opts.explain, "explain", false, "after each diff, give every changed field's reason and current owners")
	flags.BoolVar(&opts.summary, "summary", false, "print one line per object instead of the diffs")
	addSavePlanFlag(flags, &opts.savePlan)
	addCheckFlag(flags, &opts.check)
	flags.BoolVar(&opts.prune.enabled, "prune", false, "also show, as removed, what apply --prune would delete: members of --applyset, or objects matching -l")
	flags.StringVar(&opts.prune.applySet, "applyset", "", "the ApplySet apply would prune from, [RESOURCE[.GROUP]/]NAME (see kapply apply --help)")
	flags.StringSliceVar(&opts.prune.allowlist, "prune-allowlist", nil, "with --prune -l: the kinds apply would prune, as group/version/kind")
	opts.ignore.addDiffFlags(flags)
	addDiffOutputFlags(flags, &opts.output)
	return cmd
}

func runDiff(ctx context.Context, getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, opts diffOptions, run clusterRun) (err error) {
	runOpts, printer, err := opts.toRun(getter, streams.Out)
	if err != nil {
		return withCode(exitError, err)
	}
	runOpts = opts.withLocalServerSide(runOpts, streams.ErrOut)
	noise, err := opts.ignore.newDiffNoise(opts.explain, opts.appliers())
	if err != nil {
		return err
	}
	jsonOut := diffEvents(opts.output.format, streams.Out, runOpts.DryRun)
	defer jsonOut.finishInto(&err)
	mergeKeys, err := parseMergeKeys(opts.mergeKeys, opts.mergeKeyFile)
	if err != nil {
		return withCode(exitError, err)
	}
	files := load.Files{Filenames: opts.filenames, Recursive: opts.recursive, Kustomize: opts.kustomize}
	applier, in, err := loadAndConnect(ctx, getter, streams.In, files, opts.selector, applierConfig{mergeKeys: mergeKeys, parallel: opts.parallel}.withApplier(run))
	if err != nil {
		return withCode(exitError, err)
	}
	// --check's verdicts are known once the plan is: the comparisons are
	// rendered after (with them), not as each item is planned.
	view := newPlanView(printer, externalDiff() == "" && !opts.output.reports() && !opts.check, in.Objects)
	view.noise = noise
	// managedFields are kept where owners are read off them (--explain,
	// manager rules, a saved plan's changes) or shown.
	planOpts := planOptionsOf(runOpts, opts.showManaged || noise != nil || opts.savePlan != "")
	planOpts.OnItem, planOpts.StreamOnly = view.add, opts.savePlan == "" && !opts.check
	// A saved plan must not write what the rules ignore: it is planned as
	// kapply plan with the rules plans (the diff shows the same changes).
	var ignored *ignore.PlanFilter
	if opts.savePlan != "" {
		ignored, _ = opts.ignore.forPlan() // read once already by newDiffNoise
		setPlanIgnore(ignored, &planOpts)
	}
	p, err := applier.Plan(ctx, in, planOpts)
	ignored.Filter(p)
	planErr, partial := errors.AsType[*apply.PlanError](err)
	switch {
	case errors.Is(err, apply.ErrNoObjects):
		// kubectl diff shows nothing for files without objects, and exits 0.
		return nil
	case err != nil && !partial:
		return withCode(exitError, err)
	}
	if opts.check {
		if err := checkDiff(ctx, getter, view, p, planErr); err != nil {
			return withCode(exitError, err)
		}
	}
	comparisons, failed, total := view.collect(streams.ErrOut, p, planErr)
	withVerdicts(comparisons, p)
	failures := failuresOf(failed)
	differ, err := jsonOut.diff(comparisons, failures, len(failed))
	if jsonOut == nil {
		differ, err = showOutput(ctx, opts.ignore.diffStreams(streams), printer, opts.output, comparisons, failures)
	}
	if err == nil {
		err = noise.Finish(jsonOut.textOut(streams), streams.ErrOut)
	}
	if err != nil {
		return withCode(exitError, err)
	}
	if opts.check {
		if n := printVerdicts(streams.ErrOut, p); n > 0 {
			return deniedByCheck(n, "the diff shows writes the server would refuse")
		}
	}
	if err := savePlan(run, getter, opts.savePlan, p); err != nil {
		return withCode(exitError, err)
	}
	return diffExit(len(failed), total, differ)
}

// comparedEvent is one object made ready to print: what goes to stderr
// (warnings, errors) and the comparison, or the failed event.
type comparedEvent struct {
	stderr     string
	comparison *diff.Comparison
	failure    *apply.Event
}

// compareEvent turns the event of an object that could not be planned,
// a file that could not be loaded or a step (pruning) into its warnings
// and errors as stderr lines.
func compareEvent(ev apply.Event) comparedEvent {
	var stderr strings.Builder
	printWarnings(&stderr, ev)
	switch ev.Outcome {
	case apply.Failed:
		fmt.Fprintln(&stderr, failureMessage(ev.Err))
		return comparedEvent{stderr: stderr.String(), failure: &ev}
	}
	return comparedEvent{stderr: stderr.String()}
}

// asApply is the apply whose dry run diff shows.
func (opts diffOptions) asApply(dryRun string) applyOptions {
	return applyOptions{filenames: opts.filenames, recursive: opts.recursive, kustomize: opts.kustomize,
		selector: opts.selector, fieldManager: opts.fieldManager, mergeKeys: opts.mergeKeys,
		mergeKeyFile: opts.mergeKeyFile, parallel: opts.parallel, chunkSize: opts.chunkSize, dryRun: dryRun, prune: opts.prune,
		serverSide: opts.serverSide, force: opts.force}
}

// toRun checks the flags and turns them into the run's options (those of
// apply with a dry run) and the printer.
func (opts diffOptions) toRun(getter *genericclioptions.ConfigFlags, out io.Writer) (apply.Options, diff.Printer, error) {
	dryRun := opts.dryRun
	if opts.local {
		dryRun = "client"
	}
	if dryRun != "server" && dryRun != "client" {
		return apply.Options{}, diff.Printer{}, fmt.Errorf(`--dry-run must be "server" or "client", not %q`, dryRun)
	}
	if err := opts.output.check(opts.summary); err != nil {
		return apply.Options{}, diff.Printer{}, err
	}
	color, err := diff.UseColor(opts.color, out, os.Getenv("NO_COLOR"))
	if err != nil {
		return apply.Options{}, diff.Printer{}, err
	}
	if opts.localServerSide() {
		dryRun = "server" // checked as such; computed locally (withLocalServerSide)
	}
	runOpts, _, err := opts.asApply(dryRun).toRun(getter)
	printer := diff.Printer{Summary: opts.summary, Options: diff.Options{
		ShowManaged: opts.showManaged, ShowSecrets: opts.showSecrets, Explain: opts.explain, Color: color && !opts.output.reports(),
		AllSides: externalDiff() != "" && !opts.summary}}
	return runOpts, printer, err
}

func content(u *unstructured.Unstructured) map[string]any {
	if u == nil {
		return nil
	}
	return u.Object
}

// show prints the comparisons, or hands them to the external diff program,
// and reports whether any object differs.
func show(ctx context.Context, streams genericiooptions.IOStreams, printer diff.Printer, comparisons []diff.Comparison) (bool, error) {
	if program := externalDiff(); program != "" && !printer.Summary {
		return diff.External(ctx, program, comparisons, streams.Out, streams.ErrOut)
	}
	if err := printer.Print(streams.Out, comparisons); err != nil {
		return false, err
	}
	for _, c := range comparisons {
		if c.Outcome != diff.Unchanged {
			return true, nil
		}
	}
	return false, nil
}

func externalDiff() string {
	if program := os.Getenv(kapplyExternalDiff); program != "" {
		return program
	}
	return os.Getenv(kubectlExternalDiff)
}

// diffExit is kubectl diff's exit status: an error above 1 wins over
// differences.
func diffExit(failed, total int, differ bool) error {
	switch {
	case failed > 0:
		return withCode(exitError, fmt.Errorf("%d of %d objects could not be diffed", failed, total))
	case differ:
		return withCode(exitDifferences, nil)
	}
	return nil
}

// applierConfig is how diff's Applier is built: merge keys, --parallel.
func (opts *diffOptions) applierConfig() (applierConfig, error) {
	mergeKeys, err := parseMergeKeys(opts.mergeKeys, opts.mergeKeyFile)
	return applierConfig{mergeKeys: mergeKeys, parallel: opts.parallel}, err
}
