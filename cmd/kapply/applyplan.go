package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/diff"
	"github.com/kapply/kapply/pkg/load"
	"github.com/kapply/kapply/pkg/plan"
)

// reviewOptions are apply's flags for a reviewed run: a saved plan
// (--plan) or a plan shown and confirmed (--confirm, --yes).
type reviewOptions struct {
	planFile string
	confirm  bool
	yes      bool
}

func (r *reviewOptions) add(flags *pflag.FlagSet) {
	flags.StringVar(&r.planFile, "plan", "", "execute exactly the plan saved by kapply plan (e.g. --plan plan.json -f manifests/ -R; -f, required, gives the files it was made from: every item must be what they give, or nothing runs; a plan made with --applyset needs the same --applyset): an object changed since in a field the plan writes or reads is refused, with what changed. A plan of several contexts (kapply plan --contexts) runs in its contexts, or those --contexts picks, or --context's alone; each is verified against its own cluster")
	flags.BoolVarP(&r.confirm, "confirm", "i", false, "show the plan as a table and ask Continue? [y/N] on the terminal before writing (e.g. -i); what runs is the plan shown")
	flags.BoolVar(&r.yes, "yes", false, "with --confirm, do not ask: show the plan and apply it (e.g. -i --yes, where no terminal is at hand)")
}

func (r reviewOptions) on() bool { return r.planFile != "" || r.confirm || r.yes }

// planFixedFlags are apply's flags whose effect a saved plan holds: given
// with --plan they are refused (check), and kuberc's defaults of them are
// not used by apply --plan (kapply plan took them when it made the plan).
var planFixedFlags = []string{"server-side", "prune-allowlist", "respect-ignore", "ignore", "ignore-file"}

// check refuses apply's flags a reviewed run cannot honour: it executes
// a plan, which neither dry runs nor replaces objects; with --plan, how
// objects are written was decided by kapply plan.
func (r reviewOptions) check(opts applyOptions) error {
	refused := map[string]bool{
		"--dry-run": opts.dryRun != "" && opts.dryRun != "none", "--force": opts.replace,
		"--grace-period": opts.gracePeriod != -1, "--subresource": opts.subresource != "",
		"--overwrite=false": opts.noOverwrite, "--prune-allow-empty": opts.prune.allowEmpty, "--all": opts.prune.all,
	}
	if r.planFile != "" {
		// --prune, --applyset, -l, --all and merge keys may be repeated
		// from kapply plan: the plan holds its prunes, --applyset names
		// their parent, -l selects the files and what may be pruned. Ignore rules were the
		// plan's to apply: it writes no field they name.
		refused["--server-side"], refused["--prune-allowlist"] = opts.serverSide, len(opts.prune.allowlist) > 0
		refused["--respect-ignore"], refused["--ignore"] = opts.ignore.respect, opts.ignore.given()
		// A plan of kapply plan --prune --all names no selector: --all
		// says its prune items need none.
		refused["--all"] = false
	}
	for _, name := range slices.Sorted(maps.Keys(refused)) {
		switch {
		case !refused[name]:
		case r.planFile != "":
			return fmt.Errorf("%s cannot be used with --plan: the plan decides what runs (give it to kapply plan)", name)
		default:
			return fmt.Errorf("%s cannot be used with --confirm", name)
		}
	}
	if r.yes && !r.confirm {
		return errors.New("--yes needs --confirm")
	}
	return nil
}

// applySetPartOfLabel marks an ApplySet's members (KEP-3659).
const applySetPartOfLabel = "applyset.kubernetes.io/part-of"

// runReviewed is apply with --plan or --confirm: the plan is read (or
// made), shown and confirmed when asked, then executed as it is — never
// planned again in between.
func runReviewed(ctx context.Context, getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, opts applyOptions, run clusterRun) (err error) {
	keepRunningOnClosedOutput()
	if err := opts.review.check(opts); err != nil {
		return runFailed(err)
	}
	if err := opts.ignore.checkLoad(); err != nil {
		return err // a usage error (exit 2), as apply's
	}
	checked := opts
	if opts.review.planFile != "" {
		// The plan names the objects (-f gives the files to check it by) and
		// its prunes; --applyset only names the parent to record them on.
		checked.filenames = append(checked.filenames, opts.review.planFile)
		checked.prune.enabled = opts.prune.applySet != ""
	}
	runOpts, printer, err := checked.toRun(getter)
	if err != nil {
		return runFailed(err)
	}
	_, opts.history.user = runNames(getter) // a revision's user if the server does not say

	defer printer.startEvents(streams.Out, "apply", runOpts.DryRun).finishInto(&err) // -o events
	var applier *apply.Applier
	var in apply.Input
	p, fromFleet := run.given, run.given != nil
	switch {
	case fromFleet:
		// Over several contexts, the plans were read (or made, shown and
		// confirmed) once for all before the clusters started.
		applier, in, err = connectForPlan(ctx, getter, streams.In, opts, p, run)
	case opts.review.planFile != "":
		applier, in, p, err = loadPlan(ctx, getter, streams.In, opts, run)
	default:
		applier, in, p, err = planFiles(ctx, getter, streams.In, opts, run)
	}
	if err != nil {
		return runFailed(err)
	}
	if n := printVerdicts(streams.ErrOut, p); n > 0 { // --check's, or a saved plan's
		return deniedByCheck(n, "nothing was written")
	}
	if opts.review.confirm && !fromFleet {
		// With -o, stdout is for the objects printed after the run.
		asked := streams
		if opts.output != "" {
			asked.Out = streams.ErrOut
		}
		diff.WritePlanTable(asked.Out, p)
		if !opts.review.yes && hasChanges(p) {
			if err := confirmed(asked); err != nil {
				return err
			}
		}
	}
	return executePlan(ctx, streams, opts, runOpts, printer, applier, in, p, run)
}

// loadPlan reads the plan file and the files given with it (for Secret
// values), and connects.
// A PlanList (kapply plan --contexts) gives the plan of the context the
// run talks through (--context).
func loadPlan(ctx context.Context, getter *genericclioptions.ConfigFlags, stdin io.Reader, opts applyOptions, run clusterRun) (*apply.Applier, apply.Input, *plan.Plan, error) {
	p, set, err := readPlanDocument(opts.review.planFile)
	if err != nil {
		return nil, apply.Input{}, nil, err
	}
	if set != nil {
		name, _ := runNames(getter)
		var ok bool
		if p, ok = set.For(name); !ok {
			return nil, apply.Input{}, nil, fmt.Errorf("%s holds plans for contexts %s, none for context %q: pick one with --context, or run them all with --contexts (or no context flag)",
				opts.review.planFile, strings.Join(set.Contexts(), ", "), name)
		}
	}
	applier, in, err := connectForPlan(ctx, getter, stdin, opts, p, run)
	return applier, in, p, err
}

// connectForPlan reads the files given with a plan (for Secret values)
// and connects.
func connectForPlan(ctx context.Context, getter *genericclioptions.ConfigFlags, stdin io.Reader, opts applyOptions, p *plan.Plan, run clusterRun) (*apply.Applier, apply.Input, error) {
	if err := sameSettings(opts, p.Settings); err != nil {
		return nil, apply.Input{}, fmt.Errorf("%s: %w", opts.review.planFile, err)
	}
	// The plan's objects, and the -f files' Secrets, go to the namespace
	// it was made with; an explicit -n may only repeat it.
	if ns := flagValue(getter.Namespace); ns != "" && p.Settings.Namespace != "" && ns != p.Settings.Namespace {
		return nil, apply.Input{}, fmt.Errorf("%s: the plan was made with -n %s, not -n %s: its objects and the Secrets of the -f files go to namespace %s; plan again to apply in another namespace",
			opts.review.planFile, p.Settings.Namespace, ns, p.Settings.Namespace)
	}
	// The plan records its members on the ApplySet it was made with;
	// --applyset may repeat it, not name another.
	if set := opts.prune.applySet; set != "" && set != p.Settings.ApplySet {
		return nil, apply.Input{}, fmt.Errorf("%s: the plan was made with --applyset=%q, not %q: it records its members on its own set (plan again to use another)", opts.review.planFile, p.Settings.ApplySet, set)
	}
	if len(opts.filenames) == 0 && opts.kustomize == "" && p.Settings.RollbackTo > 0 {
		// A rollback's objects are its revision's, read again from the
		// history; -f gives only Secrets' values.
		applier, err := newApplier(getter, applierConfig{parallel: opts.parallel})
		return applier, apply.Input{}, err
	}
	if len(opts.filenames) == 0 && opts.kustomize == "" {
		// Each item is planned again from the files and must come out as
		// saved: a checksum alone is no proof, anyone can compute one.
		return nil, apply.Input{}, fmt.Errorf("%s: give the files the plan was made from with -f (or -k): apply --plan writes only what they give", opts.review.planFile)
	}
	files := load.Files{Filenames: opts.filenames, Recursive: opts.recursive, Kustomize: opts.kustomize}
	applier, in, err := loadAndConnect(ctx, getter, stdin, files, opts.selector, applierConfig{parallel: opts.parallel}.withApplier(run))
	if err == nil && len(in.Errors) > 0 {
		err = errors.Join(in.Errors...)
	}
	return applier, in, err
}

// executePlan executes p and prints each object's outcome as apply does;
// an object refused as changed since the plan is followed by a diff of
// what changed.
func executePlan(ctx context.Context, streams genericiooptions.IOStreams, opts applyOptions,
	runOpts apply.Options, printer *eventPrinter, applier *apply.Applier, in apply.Input, p *plan.Plan, run clusterRun) error {
	for _, it := range p.Items {
		printer.serverSide = printer.serverSide || it.Action == plan.Apply
	}
	// The cascade of --cascade reaches the run's options only with --prune.
	cascade, err := parseCascade(opts.prune.cascade)
	if err != nil {
		return withCode(exitError, err)
	}
	// How the items are written is the plan's (plan.Settings); -l and
	// --all say which prune items the run may delete.
	execOpts := apply.ExecuteOptions{Cascade: cascade, Timeout: runOpts.Timeout, Waves: apply.WaveOptions{Health: runOpts.Waves.Health, WaitPruned: opts.wait}, Objects: in,
		PruneSelector: opts.selector, PruneAll: opts.prune.all, History: opts.history.options(streams.ErrOut)}
	// As apply: lines print as the items are done, and the run keeps no
	// objects of them (ExecuteOptions.Lean).
	lines := printer.stream(streams, nil)
	if lines != nil {
		execOpts.OnEvent, execOpts.Lean = lines.add, true
	}
	events, err := applier.Execute(ctx, p, execOpts)
	printed := lines.close()
	if err != nil && events == nil {
		return runFailed(err)
	}
	run.report.addEvents(events)
	failed := printer.printRest(streams, events, printed)
	printChangedSince(streams.ErrOut, p, events)
	if err != nil {
		return runFailed(err)
	}
	if opts.wait {
		if err := waitReady(ctx, applier, streams, events, opts.waitTimeout(), runOpts.Waves.Health, printer); err != nil {
			return err
		}
	}
	if failed > 0 {
		return withCode(exitFailed, nil)
	}
	return nil
}

// printChangedSince writes, for each item refused because fields changed
// since the plan, a unified diff of those fields (diff.ChangedSince).
func printChangedSince(w io.Writer, p *plan.Plan, events []apply.Event) {
	for i, ev := range events {
		var changed *plan.ChangedError
		if ev.Outcome != apply.Failed || !errors.As(ev.Err, &changed) || len(changed.Fields) == 0 || ev.Live == nil {
			continue
		}
		text, err := diff.ChangedSince(p.Items[i], changed.Fields, ev.Live.Object)
		if err != nil {
			fmt.Fprintf(w, "error: %s: showing what changed: %v\n", p.Items[i].ID, err)
			continue
		}
		io.WriteString(w, text)
	}
}

// sameSettings refuses a flag of apply --plan that would write otherwise
// than the plan was made to: the plan keeps its settings (plan.Settings),
// and a flag may only repeat them.
func sameSettings(opts applyOptions, s plan.Settings) error {
	validation, err := opts.fieldValidation()
	if err != nil {
		return err
	}
	switch {
	case opts.fieldManager != "" && opts.fieldManager != s.FieldManager:
		return fmt.Errorf("the plan was made with --field-manager=%q, not %q: plan again to write as another manager", s.FieldManager, opts.fieldManager)
	case opts.force && !s.ForceConflicts:
		return errors.New("the plan was made without --force-conflicts: plan again with it")
	// --validate has a default (strict); only another value is refused.
	case opts.validate != "strict" && validation != "" && validation != s.FieldValidation:
		return fmt.Errorf("the plan was made with --validate=%q, not %q: plan again with it", s.FieldValidation, opts.validate)
	}
	return nil
}

func flagValue(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
