package main

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/diff"
	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/ignore"
	"github.com/kapply/kapply/pkg/merge"
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

// managedOf reads live's managedFields for manager rules; nil (none) when
// they cannot be read, which the diff's --explain reports already.
func managedOf(live *unstructured.Unstructured) *ownership.Ownership {
	if live == nil {
		return nil
	}
	o, err := ownership.Owners(live)
	if err != nil {
		return nil
	}
	return o
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
	runOpts.FileFromLive = (&planIgnore{rules: rules}).fileFromLive
	return nil
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

// diffNoise filters and classifies each object of a diff: the ignored
// fields leave both sides, --explain gets each changed field's class, and
// --suggest-ignore collects the rules that would silence the rest.
type diffNoise struct {
	rules    *ignore.Rules
	appliers []string
	explain  bool
	suggest  bool
	mu       sync.Mutex
	suggests []*ignore.Rule
}

// newDiffNoise is nil when diff needs neither rules nor classes.
func (o ignoreOptions) newDiffNoise(explain bool, appliers []string) (*diffNoise, error) {
	rules, err := o.load()
	if err != nil || rules == nil && !explain && !o.suggest {
		return nil, err
	}
	return &diffNoise{rules: rules, appliers: appliers, explain: explain, suggest: o.suggest}, nil
}

// adjust strips the ignored fields from obj's sides and changes, and
// classes what is left; called concurrently by the diff's workers.
func (n *diffNoise) adjust(ev apply.Event, obj *diff.Object) {
	if n == nil || obj.Live == nil && obj.After == nil || ev.Outcome == apply.Pruned {
		return
	}
	id := plan.IDOf(ev.Object)
	managed := managedOf(ev.Live)
	if n.rules != nil {
		sides := n.rules.Strip(id, managedIfAny(managed), obj.Live, obj.After)
		kept := obj.Changes[:0:0]
		for _, c := range obj.Changes {
			if ignore.Kept(c.Path, sides[0], sides[1]) {
				kept = append(kept, c)
			}
		}
		obj.Live, obj.After, obj.Changes = sides[0], sides[1], kept
	}
	if !n.explain && !n.suggest {
		return
	}
	s := n.sides(ev, obj, managed)
	fields := ignore.Classify(s)
	if s.File != nil {
		obj.Changes = causedByFile(obj.Changes, fields)
	}
	if n.explain {
		obj.Notes = classNotes(fields)
	}
	if rule := ignore.Suggest(id, fields); n.suggest && rule != nil && ev.Live != nil {
		n.mu.Lock()
		n.suggests = append(n.suggests, rule)
		n.mu.Unlock()
	}
}

// sides are what Classify compares for the event: the local merge (the
// object sent, for a create), the server's result, and both objects'
// managedFields. Under --server-side there is no local merge to compare.
func (n *diffNoise) sides(ev apply.Event, obj *diff.Object, managed *ownership.Ownership) ignore.Sides {
	s := ignore.Sides{Live: obj.Live, Result: obj.After, Appliers: n.appliers}
	if managed != nil {
		s.LiveOwners = managed
	}
	if result := managedOf(ev.Result); result != nil && ev.Result.GetManagedFields() != nil {
		s.ResultOwners = result
	}
	switch {
	case ev.Item != nil && (ev.Item.Action == plan.Update || ev.Item.Action == plan.Unchanged):
		s.Merged = ev.Item.Merged
		s.Changes = ev.Item.Changes
	case ev.Live == nil:
		s.Merged = ev.Object.Object
	default:
		// A server-side apply: the server merges; the file says what
		// the request sets.
		s.File = ev.Object.Object
	}
	if n.rules != nil {
		id, m := plan.IDOf(ev.Object), managedIfAny(managed)
		stripped := n.rules.Strip(id, m, s.Merged, s.File)
		s.Merged, s.File = stripped[0], stripped[1]
		s.Changes = ignore.FilterChanges(s.Changes, obj.Live, obj.After)
	}
	return s
}

// causedByFile drops from a server-side apply's changes (live to the
// server's result, each called set by the file) the fields the server
// changed: --explain gives those their class instead.
func causedByFile(changes []merge.Change, fields []ignore.Field) []merge.Change {
	server := map[string]bool{}
	for _, f := range fields {
		if f.Class.FromServer() && f.Class != ignore.OtherWriter {
			server[f.Path.String()] = true
		}
	}
	return slices.DeleteFunc(slices.Clone(changes), func(c merge.Change) bool { return server[c.Path.String()] })
}

// managedIfAny is m as the interface, nil (not a typed nil) when m is.
func managedIfAny(m *ownership.Ownership) ignore.Managed {
	if m == nil {
		return nil
	}
	return m
}

// classNotes is --explain's block of the fields the file does not cause,
// one line each with its cause (the reasons above give the file's).
func classNotes(fields []ignore.Field) string {
	var b strings.Builder
	for _, f := range fields {
		if f.Class.FromServer() {
			fmt.Fprintf(&b, "#   %s: %s\n", f.Path, f)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return "# not caused by the file (kapply diff --suggest-ignore writes rules for these):\n" + b.String()
}

// finish writes, after the diff, a warning on errOut for each rule whose
// jq ran out of the run's time (the fields it would ignore are shown), the
// suggested rules (--suggest-ignore) and, with --explain, the rules that
// matched nothing.
func (n *diffNoise) finish(out, errOut io.Writer) error {
	if n == nil {
		return nil
	}
	for _, r := range n.rules.TimedOut() {
		fmt.Fprintf(errOut, "Warning: %v: the fields it would ignore are shown\n", r.TimeoutError())
	}
	if n.explain && n.rules != nil {
		for _, r := range n.rules.Unmatched() {
			fmt.Fprintf(out, "# ignore rule %s matched nothing\n", r.Origin)
		}
	}
	if !n.suggest {
		return nil
	}
	sort.Slice(n.suggests, func(i, j int) bool { return ruleName(n.suggests[i]) < ruleName(n.suggests[j]) })
	return ignore.WriteFile(out, n.suggests)
}

func ruleName(r *ignore.Rule) string {
	return strings.Join([]string{*r.Group, r.Kind, r.Namespace, r.Name}, "/")
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

// driftFilter drops from status's drift the fields the rules ignore (on
// the live object, or on the file for a field removed live); nil without
// rules.
func (o ignoreOptions) driftFilter() (func(live, file *unstructured.Unstructured, d *ownership.Drift), error) {
	rules, err := o.load()
	if rules == nil {
		return nil, err
	}
	return func(live, file *unstructured.Unstructured, d *ownership.Drift) {
		if d == nil {
			return
		}
		id, managed := plan.IDOf(file), managedIfAny(managedOf(live))
		ignored := func(p fieldpath.Path) bool {
			return rules.Ignored(id, managed, live.Object, p) || rules.Ignored(id, managed, file.Object, p)
		}
		d.Changed = slices.DeleteFunc(d.Changed, func(c ownership.ChangedField) bool { return ignored(c.Path) })
		d.Foreign = slices.DeleteFunc(d.Foreign, func(f ownership.OwnedField) bool { return ignored(f.Path) })
	}, nil
}
