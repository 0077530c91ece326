package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/apply/prune"
	kcluster "github.com/kapply/kapply/pkg/cluster"
	"github.com/kapply/kapply/pkg/load"
	"github.com/kapply/kapply/pkg/plan"
	"github.com/kapply/kapply/pkg/schema"
)

// applyOptions are the flags of `kapply apply`.
type applyOptions struct {
	filenames    []string
	recursive    bool
	kustomize    string
	selector     string
	fieldManager string
	timeout      time.Duration
	healthFile   string
	mergeKeys    []string
	mergeKeyFile string
	parallel     int
	chunkSize    int64
	dryRun       string
	validate     string
	output       string
	prune        pruneOptions
	serverSide   bool
	force        bool
	subresource  string
	replace      bool
	gracePeriod  int
	noOverwrite  bool
	secretRecord string
	wait         bool
	review       reviewOptions
	ignore       ignoreOptions
	history      historyFlags // --change-cause, --history-limit, --history-namespace (history.go)
	check        bool         // --check (check.go)
}

// pruneOptions are apply's pruning flags.
type pruneOptions struct {
	enabled    bool
	applySet   string
	allowlist  []string
	allowEmpty bool
	cascade    string
	// all is kubectl's --all: prune by selector with no selector at all.
	all bool
}

func newApplyCommand(getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var opts applyOptions
	var contexts fleetFlags
	var peekPlan func()
	cmd := &cobra.Command{
		Use:   "apply (-f FILENAME | -k DIRECTORY)",
		Short: "Create or update objects from files, with a three-way merge",
		Long: `Apply the objects in the files to the cluster: objects that do not exist are
created, objects that exist are updated with a three-way merge of the last-applied
configuration, the file and the live object. The last-applied configuration is
recorded exactly as kubectl records it.

Namespaces and CustomResourceDefinitions are applied first; custom resources of a
CRD in the same run wait until it is established. Everything else is applied
concurrently (--parallel). Lists of custom resources merge by the CRD's
x-kubernetes-list-map-keys, or by keys you declare (--merge-key, see
docs/merge-keys.md), where kubectl replaces them whole.

One bad object never stops the others: every failure is printed with its file and
object, and the exit code is 1. A summary line goes to stderr.

With --wait, apply then waits until every applied object is ready or failed, as
kstatus computes it from the object's status (one watch per resource and
namespace), printing "deployment.apps/web ready" or "job.batch/x failed: REASON:
MESSAGE" per object; whatever is neither after --timeout is named with its
reason, and the exit code is 1.`,
		Example: `  # Apply one file
  kapply apply -f deployment.yaml

  # Apply a directory tree into a namespace
  kapply apply -f manifests/ -R -n staging

  # Apply a kustomization, or objects from stdin
  kapply apply -k overlays/prod
  cat objects.yaml | kapply apply -f -

  # See what would happen, computed locally or by the server's dry run
  kapply apply -f manifests/ -R --dry-run=client
  kapply apply -f manifests/ -R --dry-run=server -o yaml

  # Apply, then wait up to 5 minutes until everything is rolled out and ready
  kapply apply -f manifests/ -R --wait --timeout 5m

  # Apply server-side, taking fields other managers own
  kapply apply -f manifests/ -R --server-side --force-conflicts

  # Delete what the files no longer declare, tracking the set in Secret "web" (KEP-3659)
  kapply apply -f manifests/ -R -n shop --prune --applyset=web

  # Merge the rules of a custom resource by name, where its CRD has no list markers
  kapply apply -f widgets/ --merge-key 'Widget.example.com:spec.rules=name'

  # Execute exactly a plan saved by kapply plan, checked against the files it was made from
  kapply apply --plan plan.json -f manifests/ -R

  # Show the plan as a table and ask before writing; --yes where no terminal is at hand
  kapply apply -f manifests/ -R --confirm
  kapply apply -f manifests/ -R -i --yes

  # Results for CI, a JSON object per line (docs/events.md)
  kapply apply -f manifests/ -R --wait -o events | jq -c 'select(.status == "Failed")'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.review.planFile != "" {
				dropKubercDefaults(cmd, planFixedFlags...)
			}
			peekPlan()
			return contexts.run(cmd, getter, streams, opts.fleetCommand())
		},
	}
	contexts.add(cmd)
	peekPlan = contexts.reviewAcross(getter, streams, &opts, opts.fleetCommand)
	flags := cmd.Flags()
	objectSource{&opts.filenames, &opts.recursive, &opts.kustomize, &opts.selector}.add(flags, "apply", ", a URL read within --request-timeout", selectorExample)
	flags.StringVar(&opts.fieldManager, "field-manager", "", fmt.Sprintf("name recorded in managedFields for the writes (default %q, or %q with --server-side, as kubectl)", apply.ClientSideFieldManager, apply.ServerSideFieldManager))
	addDurationFlag(flags, &opts.timeout, "timeout", 0, "with --force, how long to wait for a deleted object to be gone before creating it again (kubectl's --timeout); with --wait, how long to wait (from the end of the apply) for the applied objects to become ready; also how long to wait for CRDs of the run to become established. 0 means one minute for each. Also bounds the gates of all the run's waves together (0: 5 minutes; see docs/waves.md)")
	flags.StringVar(&opts.healthFile, "health-file", "", "YAML list of {apiVersion, kind, current, inProgress, failed} CEL expressions, or a Flux Kustomization's spec.healthCheckExprs: for the kinds it names, readiness by these instead of kstatus (the gates of the run's waves, and --wait); see docs/waves.md")
	flags.BoolVar(&opts.wait, "wait", false, "after applying, wait until every applied object is ready (kstatus: a Deployment rolled out, a Job started, a custom resource's Ready condition True...) or failed, up to --timeout; exit 1 if any failed or is not ready; ignored with --dry-run")
	flags.StringArrayVar(&opts.mergeKeys, "merge-key", nil, "merge a list of a kind by keys: 'KIND[.GROUP][/VERSION]:PATH=KEY[,KEY]' or ':PATH:set' (repeatable; see docs/merge-keys.md)")
	flags.StringVar(&opts.mergeKeyFile, "merge-keys-file", "", "YAML file declaring merge keys for lists of custom resources (see docs/merge-keys.md)")
	flags.IntVar(&opts.parallel, "parallel", apply.DefaultParallel, "how many objects to apply at once")
	addChunkSizeFlag(cmd, &opts.chunkSize)
	addKubectlDryRunFlag(cmd, &opts.dryRun, `"none", "client" (compute every change locally, send nothing; also a bare --dry-run, deprecated as in kubectl) or "server" (the server's dry run: admission and defaulting show, nothing is stored)`)
	addValidateFlag(cmd, &opts.validate)
	flags.StringVarP(&opts.output, "output", "o", "", `print "name", "yaml", "json" or "kyaml" of what was applied instead of the kubectl-style lines, or "events": a JSON object per line (docs/events.md)`)
	flags.BoolVar(&opts.serverSide, "server-side", false, "send each object as a server-side apply patch (managedFields decide ownership); objects last applied client-side are upgraded so dropped fields are still deleted")
	flags.BoolVar(&opts.force, "force-conflicts", false, "with --server-side: take fields that other managers own")
	flags.StringVar(&opts.subresource, "subresource", "", `with --server-side: apply to this subresource of each object ("status", "scale"), as kubectl's --subresource`)
	flags.BoolVar(&opts.replace, "force", false, "when the server refuses a patch because a field is immutable (a Deployment's selector, a Job's template) or keeps reporting a conflict, delete the object and create it from the file, as kubectl apply --force (dependents go by --cascade). Unlike kubectl, refused before deleting when the server's dry run of the create is denied; the original is saved to a file (its path printed) until an object exists again, and created again if the create fails or the run is interrupted")
	flags.IntVar(&opts.gracePeriod, "grace-period", -1, "with --force, the seconds given to the object to terminate gracefully when it is deleted; negative: the object's own")
	addOverwriteFlag(cmd, &opts.noOverwrite, "take the file's value for a field someone else changed since the last apply; with --overwrite=false such an object is refused (the others are applied) and the exit code is 1")
	flags.StringVar(&opts.secretRecord, "secret-record", "redacted", `how a Secret's values are kept in its last-applied record: "redacted" (each value a salted digest, keys kept; see docs/secret-records.md) or "plain" (as kubectl keeps them)`)
	flags.BoolVar(&opts.prune.enabled, "prune", false, "delete the objects the files no longer declare: members of --applyset, or (kubectl's older form) objects matching -l")
	flags.StringVar(&opts.prune.applySet, "applyset", "", "the ApplySet to prune from, [RESOURCE[.GROUP]/]NAME (a Secret by default, in the -n namespace); compatible with kubectl's")
	flags.StringSliceVar(&opts.prune.allowlist, "prune-allowlist", nil, "with --prune -l: the kinds to prune, as group/version/kind (core/v1/ConfigMap); Namespaces and PersistentVolumes are pruned only when listed here")
	flags.BoolVar(&opts.prune.allowEmpty, "prune-allow-empty", false, "let a run with no objects prune every member of the set")
	flags.StringVar(&opts.prune.cascade, "cascade", "background", `how pruned objects' dependents go: "background", "foreground" or "orphan"`)
	opts.review.add(flags)
	addCheckFlag(flags, &opts.check)
	opts.history.add(flags)
	opts.ignore.addApplyFlags(flags)
	flags.BoolVar(&opts.prune.all, "all", false, "with --prune and no -l: prune every object of the allowlisted kinds that has a last-applied record and that the files no longer declare, in the namespaces the run applied to (kubectl's --all)")
	return cmd
}

// fleetCommand is apply in one cluster of a run over several contexts.
func (opts *applyOptions) fleetCommand() fleetCommand {
	return fleetCommand{name: "apply", jsonLines: opts.output == eventsOutput, waits: opts.wait, applier: opts.applierConfig,
		run: func(ctx context.Context, getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, run clusterRun) error {
			if opts.review.on() || opts.check { // --check: refuse before writing
				return runReviewed(ctx, getter, streams, *opts, run)
			}
			return runApply(ctx, getter, streams, *opts, run)
		}}
}

// applierConfig is how apply's Applier is built: a saved plan's run
// takes no merge keys (the plan was made with them).
func (opts *applyOptions) applierConfig() (applierConfig, error) {
	if opts.review.planFile != "" {
		return applierConfig{parallel: opts.parallel}, nil
	}
	mergeKeys, err := parseMergeKeys(opts.mergeKeys, opts.mergeKeyFile)
	return applierConfig{mergeKeys: mergeKeys, parallel: opts.parallel}, err
}

func runApply(ctx context.Context, getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, opts applyOptions, run clusterRun) (err error) {
	keepRunningOnClosedOutput()
	runOpts, printer, err := opts.toRun(getter)
	if err != nil {
		return runFailed(err)
	}
	opts.history.recordOn(runOpts.Prune, getter, streams.ErrOut)
	// -o events: started now, its summary written last.
	defer printer.startEvents(streams.Out, "apply", runOpts.DryRun).finishInto(&err)
	if warning := dryRunDeprecation(opts.dryRun); warning != "" {
		fmt.Fprintf(streams.ErrOut, "Warning: %s\n", warning)
	}
	bar := newProgress(streams.ErrOut)
	runOpts.Progress = bar.update
	if runOpts.Force != nil {
		runOpts.Force.OnBackup = func(obj *unstructured.Unstructured, _ plan.Source, path string) {
			bar.clear()
			fmt.Fprintf(streams.ErrOut, "kapply: saved %s to %s before deleting it for --force\n", apply.ObjectRef(obj), path)
		}
	}
	lines := printer.stream(streams, bar.clear)
	if lines != nil {
		// Lines print no object: the run need not keep them, nor read
		// their managedFields.
		runOpts.OnEvent, runOpts.Lean, runOpts.NoManagedFields = lines.add, true, true
	}
	if err := opts.ignore.forApply(&runOpts); err != nil {
		return err
	}
	applier, events, err := runApplyOn(ctx, getter, streams.In, opts, runOpts, run)
	printed := lines.close()
	bar.finish()
	if errors.Is(err, apply.ErrNoObjects) && opts.prune.enabled {
		err = fmt.Errorf("%w; not pruning, which would delete every member: pass --prune-allow-empty to mean it", err)
	}
	if err != nil {
		return runFailed(err)
	}
	failed := printer.printRest(streams, events, printed)
	if opts.wait && runOpts.DryRun == kcluster.NoDryRun {
		if err := waitReady(ctx, applier, streams, events, opts.waitTimeout(), runOpts.Waves.Health, printer); err != nil {
			return err
		}
	}
	if failed > 0 {
		return withCode(exitFailed, nil)
	}
	return nil
}

// runApplyOn loads the files ("-" from stdin) and applies them with runOpts;
// the applier is for the wait that may follow.
func runApplyOn(ctx context.Context, getter *genericclioptions.ConfigFlags, stdin io.Reader, opts applyOptions, runOpts apply.Options, run clusterRun) (*apply.Applier, []apply.Event, error) {
	mergeKeys, err := parseMergeKeys(opts.mergeKeys, opts.mergeKeyFile)
	if err != nil {
		return nil, nil, err
	}
	files := load.Files{Filenames: opts.filenames, Recursive: opts.recursive, Kustomize: opts.kustomize}
	applier, in, err := loadAndConnect(ctx, getter, stdin, files, opts.selector, applierConfig{mergeKeys: mergeKeys, parallel: opts.parallel}.withApplier(run))
	if err != nil {
		return nil, nil, err
	}
	events, err := applier.Apply(ctx, in, runOpts)
	run.report.addEvents(events)
	return applier, events, err
}

// toRun checks the flags and turns them into the run's options and printer.
func (opts applyOptions) toRun(getter *genericclioptions.ConfigFlags) (apply.Options, *eventPrinter, error) {
	if len(opts.filenames) == 0 && opts.kustomize == "" {
		return apply.Options{}, nil, fmt.Errorf("must specify one of -f or -k")
	}
	dryRun, err := parseDryRun(opts.dryRun)
	if err != nil {
		return apply.Options{}, nil, err
	}
	validation, err := opts.fieldValidation()
	if err != nil {
		return apply.Options{}, nil, err
	}
	if err := opts.checkServerSide(dryRun); err != nil {
		return apply.Options{}, nil, err
	}
	if err := opts.checkForce(dryRun); err != nil {
		return apply.Options{}, nil, err
	}
	printer, err := newEventPrinter(opts.output, dryRun)
	if err != nil {
		return apply.Options{}, nil, err
	}
	printer.serverSide = opts.serverSide
	if _, err := parseMergeKeys(opts.mergeKeys, opts.mergeKeyFile); err != nil {
		return apply.Options{}, nil, err
	}
	if err := opts.prune.check(opts.selector); err != nil {
		return apply.Options{}, nil, err
	}
	cascade, err := parseCascade(opts.prune.cascade)
	if err != nil {
		return apply.Options{}, nil, err
	}
	secretRecord, err := parseSecretRecord(opts.secretRecord)
	if err != nil {
		return apply.Options{}, nil, err
	}
	namespace, enforce, err := getter.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return apply.Options{}, nil, fmt.Errorf("reading the namespace from kubeconfig: %w", err)
	}
	run := apply.Options{
		Write: apply.WriteOptions{
			Namespace:        namespace,
			EnforceNamespace: enforce,
			FieldManager:     opts.fieldManager,
			FieldValidation:  validation,
			ServerSide:       opts.serverSide,
			ForceConflicts:   opts.force,
			Subresource:      opts.subresource,
			NoOverwrite:      opts.noOverwrite,
			SecretRecord:     secretRecord,
		},
		Timeout:   opts.timeout,
		ChunkSize: chunkSizeOption(opts.chunkSize),
		DryRun:    dryRun,
	}
	if run.Waves.Health, err = readHealthFile(opts.healthFile); err != nil {
		return apply.Options{}, nil, err
	}
	if opts.prune.enabled {
		run.Waves.WaitPruned = opts.wait
		run.Prune = &prune.Options{Selector: opts.selector, ApplySet: opts.prune.applySet, All: opts.prune.all,
			Allowlist: opts.prune.allowlist, AllowEmpty: opts.prune.allowEmpty, Cascade: cascade}
	}
	if opts.replace {
		run.Force = &apply.ForceOptions{GracePeriod: opts.gracePeriod, Cascade: cascade}
	}
	return run, printer, nil
}

// fieldValidation is the server's fieldValidation for --validate; empty
// (the server's default, as kubectl diff) when the flag is unset.
func (opts applyOptions) fieldValidation() (string, error) {
	if opts.validate == "" {
		return "", nil
	}
	return parseValidate(opts.validate)
}

// checkServerSide refuses what kubectl refuses with --server-side.
func (opts applyOptions) checkServerSide(dryRun kcluster.DryRun) error {
	switch {
	case opts.subresource != "" && !opts.serverSide:
		return fmt.Errorf("--subresource can only be specified for --server-side")
	case opts.force && !opts.serverSide:
		return fmt.Errorf("--force-conflicts only works with --server-side")
	case opts.serverSide && dryRun == kcluster.ClientDryRun:
		return fmt.Errorf("--dry-run=client does not work with --server-side: the server computes the result; use --dry-run=server")
	}
	return nil
}

// waitTimeout is --timeout, one minute for 0 (the default, kubectl's).
func (opts applyOptions) waitTimeout() time.Duration {
	if opts.timeout <= 0 {
		return time.Minute
	}
	return opts.timeout
}

// checkForce refuses what kubectl refuses with --force, in its words.
func (opts applyOptions) checkForce(dryRun kcluster.DryRun) error {
	switch {
	case !opts.replace:
		return nil
	case opts.serverSide:
		return fmt.Errorf("--force cannot be used with --server-side")
	case dryRun == kcluster.ServerDryRun:
		return fmt.Errorf("--dry-run=server cannot be used with --force")
	case opts.prune.enabled:
		// Replaced objects get new UIDs, which pruning could take for others.
		return fmt.Errorf("--force cannot be used with --prune")
	}
	return nil
}

// check refuses flag combinations kubectl refuses too.
func (p pruneOptions) check(selector string) error {
	switch {
	case !p.enabled && (p.applySet != "" || len(p.allowlist) > 0 || p.allowEmpty):
		return fmt.Errorf("--applyset, --prune-allowlist and --prune-allow-empty need --prune")
	case p.all && selector != "":
		return fmt.Errorf("cannot set --all and --selector at the same time")
	case p.enabled && p.applySet == "" && selector == "" && !p.all:
		// kubectl's words: scripts match them.
		return fmt.Errorf("all resources selected for prune without explicitly passing --all. To prune all resources, pass the --all flag. If you did not mean to prune all resources, specify a label selector")
	case p.applySet != "" && (selector != "" || len(p.allowlist) > 0 || p.all):
		return fmt.Errorf("--applyset cannot be combined with -l, --all or --prune-allowlist")
	}
	return nil
}

func parseCascade(s string) (metav1.DeletionPropagation, error) {
	switch s {
	case "background", "true", "":
		return metav1.DeletePropagationBackground, nil
	case "foreground":
		return metav1.DeletePropagationForeground, nil
	case "orphan", "false":
		return metav1.DeletePropagationOrphan, nil
	}
	return "", fmt.Errorf(`--cascade must be "background", "foreground" or "orphan", not %q`, s)
}

// parseMergeKeys reads --merge-keys-file, then every --merge-key.
func parseMergeKeys(flags []string, file string) ([]schema.Override, error) {
	var overrides []schema.Override
	if file != "" {
		fromFile, err := schema.LoadMergeKeysFile(file)
		if err != nil {
			return nil, err
		}
		overrides = fromFile
	}
	for _, f := range flags {
		o, err := schema.ParseMergeKey(f)
		if err != nil {
			return nil, err
		}
		overrides = append(overrides, o)
	}
	return overrides, nil
}
