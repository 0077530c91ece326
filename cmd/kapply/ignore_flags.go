package main

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/diff"
	"github.com/kapply/kapply/pkg/ignore"
	"github.com/kapply/kapply/pkg/ownership"
	"github.com/kapply/kapply/pkg/plan"
)

// ignoreOptions are the ignore-rule flags of diff, status and apply
// (see docs/ignore.md).
type ignoreOptions struct {
	file    string
	rules   []string
	suggest bool
	respect bool
}

func (o *ignoreOptions) addFlags(flags *pflag.FlagSet) {
	flags.StringVar(&o.file, "ignore-file", "", "YAML file of ignore rules (kind: IgnoreRules; Argo CD's ignoreDifferences fields; see docs/ignore.md)")
	flags.StringArrayVar(&o.rules, "ignore", nil, `an ignore rule, e.g. 'kind=Deployment,pointer=/spec/replicas', 'manager=hpa-controller' or 'kind=Deployment,jq=EXPR' (jq= last); keys group, kind, namespace, name (globs), pointer, jq, manager; repeatable`)
}

// addDiffFlags adds the rule flags and --suggest-ignore.
func (o *ignoreOptions) addDiffFlags(flags *pflag.FlagSet) {
	o.addFlags(flags)
	flags.BoolVar(&o.suggest, "suggest-ignore", false, "instead of the diff, print ignore rules (an --ignore-file) that silence the changes the file does not cause: server defaults, mutating admission, fields other managers own")
}

// addApplyFlags adds the rule flags and --respect-ignore.
func (o *ignoreOptions) addApplyFlags(flags *pflag.FlagSet) {
	o.addFlags(flags)
	flags.BoolVar(&o.respect, "respect-ignore", false, "leave the fields the ignore rules name as they are live: the file's values there are replaced by the live ones before planning (Argo CD's RespectIgnoreDifferences)")
}

// load reads the rules; nil when none are given. A malformed rule is a
// usage error (exit 2) naming the file and line, or the flag.
func (o ignoreOptions) load() (*ignore.Rules, error) {
	rules := &ignore.Rules{}
	if o.file != "" {
		fromFile, err := ignore.ReadFile(o.file)
		if err != nil {
			return nil, withCode(exitError, err)
		}
		if err := rules.Add(fromFile...); err != nil {
			return nil, withCode(exitError, err)
		}
	}
	for i, text := range o.rules {
		r, err := ignore.ParseFlag(text, i+1)
		if err != nil {
			return nil, withCode(exitError, err)
		}
		if err := rules.Add(r); err != nil {
			return nil, withCode(exitError, err)
		}
	}
	if rules.Empty() {
		return nil, nil
	}
	return rules, nil
}

// forApply makes the run leave ignored fields as they are live
// (--respect-ignore); without it, rules are refused (they change nothing
// apply does, and silently ignoring them would surprise).
func (o ignoreOptions) forApply(runOpts *apply.Options) error {
	if err := o.checkRespect(); err != nil {
		return err
	}
	rules, err := o.load()
	if rules == nil {
		return err
	}
	// Manager rules read the live objects' managedFields.
	runOpts.NoManagedFields = false
	runOpts.FileFromLive = rules.FileFromLive
	return nil
}

// forPlan is the plan's ignore filter (ignore.PlanFilter); nil when no
// rules are given.
func (o ignoreOptions) forPlan() (*ignore.PlanFilter, error) {
	rules, err := o.load()
	return ignore.NewPlanFilter(rules), err
}

// setPlanIgnore puts the rules of f in the plan's options; a nil f sets
// nothing.
func setPlanIgnore(f *ignore.PlanFilter, opts *apply.PlanOptions) {
	if f == nil {
		return
	}
	// Manager rules read the live objects' managedFields.
	opts.NoManagedFields = false
	opts.FileFromLive = f.FileFromLive
}

// given reports rules given by flag or file.
func (o ignoreOptions) given() bool { return o.file != "" || len(o.rules) > 0 }

// checkLoad is checkRespect, then the rules read (a malformed one is
// exit 2), for a run that plans before it applies (apply --confirm).
func (o ignoreOptions) checkLoad() error {
	if err := o.checkRespect(); err != nil {
		return err
	}
	_, err := o.load()
	return err
}

// checkRespect refuses --respect-ignore without rules, and rules to apply
// without --respect-ignore.
func (o ignoreOptions) checkRespect() error {
	switch {
	case !o.given() && o.respect:
		return withCode(exitError, fmt.Errorf("--respect-ignore needs rules: --ignore-file or --ignore"))
	case o.given() && !o.respect:
		return withCode(exitError, fmt.Errorf("apply takes ignore rules only with --respect-ignore (which leaves those fields as they are live)"))
	}
	return nil
}

// newDiffNoise is diff's noise filter (pkg/ignore): nil when diff needs
// neither rules nor classes.
func (o ignoreOptions) newDiffNoise(explain bool, appliers []string) (*ignore.Noise, error) {
	rules, err := o.load()
	if err != nil {
		return nil, err
	}
	return ignore.NewNoise(rules, appliers, explain, o.suggest), nil
}

// adjustNoise strips the ignored fields from obj, the diff of ev, and
// classes what is left (ignore.Noise.Adjust); called concurrently by the
// diff's workers.
func adjustNoise(n *ignore.Noise, ev apply.Event, obj *diff.Object) {
	if n == nil || obj.Live == nil && obj.After == nil || ev.Outcome == apply.Pruned {
		return
	}
	d := ignore.Diffed{ID: plan.IDOf(ev.Object), Live: obj.Live, After: obj.After, Changes: obj.Changes, Notes: obj.Notes,
		LiveOwners: ignore.OwnersOf(ev.Live), Item: ev.Item, Sent: ev.Object.Object, Exists: ev.Live != nil}
	if ev.Result != nil && ev.Result.GetManagedFields() != nil {
		d.ResultOwners = ignore.OwnersOf(ev.Result)
	}
	n.Adjust(&d)
	obj.Live, obj.After, obj.Changes, obj.Notes = d.Live, d.After, d.Changes, d.Notes
}

// appliers are the managers diff's dry runs write as: the field manager
// and, for a server-side apply, the client-side managers whose fields it
// takes over first (csaupgrade).
func (opts diffOptions) appliers() []string {
	if opts.serverSide {
		return []string{opts.managerName(), apply.ClientSideFieldManager, apply.LegacyFieldManager}
	}
	return []string{opts.managerName()}
}

// managerName is the field manager diff's dry runs write as.
func (opts diffOptions) managerName() string {
	switch {
	case opts.fieldManager != "":
		return opts.fieldManager
	case opts.serverSide:
		return apply.ServerSideFieldManager
	}
	return apply.ClientSideFieldManager
}

// diffStreams are the streams the diff prints on: with --suggest-ignore,
// stdout holds only the rules, ready to save as a file.
func (o ignoreOptions) diffStreams(streams genericiooptions.IOStreams) genericiooptions.IOStreams {
	if o.suggest {
		streams.Out = io.Discard
	}
	return streams
}

// driftFilter drops from status's drift the fields the rules ignore
// (ignore.Rules.FilterDrift); nil without rules.
func (o ignoreOptions) driftFilter() (func(live, file *unstructured.Unstructured, d *ownership.Drift), error) {
	rules, err := o.load()
	if rules == nil {
		return nil, err
	}
	return rules.FilterDrift, nil
}
