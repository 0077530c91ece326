package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/apply/prune"
	"github.com/kapply/kapply/pkg/history"
	"github.com/kapply/kapply/pkg/shown"
)

// historyFlags are apply's flags for the revisions of its ApplySet.
type historyFlags struct {
	changeCause string
	limit       int
	namespace   string
	// user is the kubeconfig's, recorded if the server does not say who
	// the run is (set by recordOn or by the caller).
	user string
}

func (f *historyFlags) add(flags *pflag.FlagSet) {
	flags.StringVar(&f.changeCause, "change-cause", "", "with --applyset: why, recorded with the revision (see kapply history)")
	flags.IntVar(&f.limit, "history-limit", history.DefaultLimit, "with --applyset: how many revisions of the set to keep; 0 keeps none")
	f.addNamespace(flags)
}

func (f *historyFlags) addNamespace(flags *pflag.FlagSet) {
	flags.StringVar(&f.namespace, "history-namespace", "", "the namespace whose Secrets hold the revisions of an ApplySet whose parent is neither a Secret nor a ConfigMap (the parent's own namespace for a namespaced parent)")
}

// recordOn has a run that prunes with p record its revisions, if p names
// an ApplySet. Warnings go to errOut.
func (f historyFlags) recordOn(p *prune.Options, getter *genericclioptions.ConfigFlags, errOut io.Writer) {
	if p == nil || p.ApplySet == "" {
		return
	}
	_, f.user = runNames(getter)
	p.History = f.options(errOut)
}

// options are the history.Options of a run that records on an ApplySet.
func (f historyFlags) options(errOut io.Writer) *history.Options {
	return &history.Options{Limit: f.limit, ChangeCause: f.changeCause, Namespace: f.namespace, User: f.user,
		Warn: func(msg string) { fmt.Fprintf(errOut, "Warning: %s\n", msg) }}
}

// historyOptions are the flags of `kapply history`.
type historyOptions struct {
	applySet string
	revision int
	history  historyFlags
}

func newHistoryCommand(getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var opts historyOptions
	cmd := &cobra.Command{
		Use:   "history --applyset NAME [--revision N]",
		Short: "List the revisions of an ApplySet, or show what one changed",
		Long: `Each apply with --applyset that changes the set's configuration records a
revision: its number, time, user, field manager, --change-cause, and the
configuration of each member as it was sent (Secret values removed, keys kept).
List them, or show with --revision N what revision N changed from the one
before it, as a unified diff.`,
		Example: `  kapply history --applyset web -n shop
  kapply history --applyset web -n shop --revision 3`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runHistory(cmd.Context(), getter, streams, opts)
		},
	}
	cmd.Flags().StringVar(&opts.applySet, "applyset", "", "the ApplySet, [RESOURCE[.GROUP]/]NAME (a Secret by default, in the -n namespace)")
	cmd.Flags().IntVar(&opts.revision, "revision", 0, "show what this revision changed, as a diff against the revision before it")
	opts.history.addNamespace(cmd.Flags())
	return cmd
}

func runHistory(ctx context.Context, getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, opts historyOptions) error {
	if opts.applySet == "" {
		return withCode(exitError, fmt.Errorf("--applyset is required"))
	}
	namespace, _, err := getter.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return runFailed(err)
	}
	applier, err := newApplier(getter, applierConfig{})
	if err != nil {
		return runFailed(err)
	}
	revs, err := applier.History(ctx, apply.ApplySetRef{ApplySet: opts.applySet, Namespace: namespace, HistoryNamespace: opts.history.namespace})
	if err != nil {
		return runFailed(err)
	}
	if opts.revision != 0 {
		return printRevisionDiff(streams.Out, revs, opts.revision)
	}
	return printRevisions(streams.Out, revs)
}

func printRevisions(out io.Writer, revs []apply.Revision) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "REVISION\tTIME\tUSER\tFIELD MANAGER\tMEMBERS\tADDED\tCHANGED\tREMOVED\tCOMPLETE\tCHANGE-CAUSE")
	for _, r := range revs {
		if r.Unreadable != nil {
			// Listed by number, so that no one takes it for a gap; why is
			// on the line (names of history objects, never a value).
			fmt.Fprintf(w, "%d\t<unreadable>\t\t\t\t\t\t\tunreadable\t%s\n", r.Number, shown.Text(r.Unreadable.Error()))
			continue
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%t\t%s\n", r.Number, r.Time.UTC().Format(time.RFC3339), orNone(r.User),
			r.FieldManager, r.Counts.Members, r.Counts.Added, r.Counts.Changed, r.Counts.Removed, r.Complete, orNone(strconv.Quote(r.ChangeCause)))
	}
	return w.Flush()
}

func orNone(s string) string {
	if s == "" || s == `""` {
		return "<none>"
	}
	return s
}

// printRevisionDiff prints what revision n changed from the kept revision
// before it (none: everything is added).
func printRevisionDiff(out io.Writer, revs []apply.Revision, n int) error {
	var before []map[string]any
	from := "(no revision before)"
	for _, r := range revs {
		if r.Number < n && r.Unreadable == nil {
			before, from = r.Members, fmt.Sprintf("revision %d", r.Number)
		}
		if r.Number != n {
			continue
		}
		if r.Unreadable != nil {
			return withCode(exitFailed, r.Unreadable)
		}
		text, err := history.Diff(before, r.Members, from, fmt.Sprintf("revision %d", n))
		if err != nil {
			return runFailed(err)
		}
		_, err = io.WriteString(out, text)
		return err
	}
	return withCode(exitError, fmt.Errorf("revision %d not found (kept: %s)", n, keptNumbers(revs)))
}

func keptNumbers(revs []apply.Revision) string {
	if len(revs) == 0 {
		return "none"
	}
	return fmt.Sprintf("%d to %d", revs[0].Number, revs[len(revs)-1].Number)
}
