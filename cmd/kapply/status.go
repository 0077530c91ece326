package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/diff"
	"github.com/kapply/kapply/pkg/ownership"
)

// statusOptions are the flags of `kapply status`.
type statusOptions struct {
	files        fileFlags
	output       string
	fieldManager string
	ignore       ignoreOptions
}

func newStatusCommand(getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var opts statusOptions
	var contexts fleetFlags
	cmd := &cobra.Command{
		Use:   "status (-f FILENAME | TYPE NAME... | TYPE/NAME...)",
		Short: "Show drift: fields changed by others since the last apply, and who owns the file's fields",
		Long: `For each object in the files, show
  - the fields whose live value differs from the last-applied configuration — written
    by someone else since the last apply — with the managers that own them now
    (metadata.managedFields);
  - the fields the file sets that a manager other than apply owns now (kubectl
    scale, an autoscaler, kubectl edit).
Objects not created yet, or without a last-applied record, are said so. Secret
values (data, stringData) are masked: the output says only whether one changed.
Each object on the server also shows its health, as apply --wait computes it
(kstatus: Current, InProgress, Failed, with the reason); health does not change
the exit status.

Exit status, as diff's: 0 every object is in step with its last apply, 1 some
object is not (changed or foreign-owned fields, not on the server, no record),
2 or more an error.

Objects on the server can be named instead of files (TYPE NAME..., TYPE/NAME...):
their last-applied record then stands for the file.`,
		Example: `  kapply status -f manifests/ -R
  kapply status -f web.yaml -o json | jq '.[].changed'
  kapply status deployment/web -n shop`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return contexts.run(cmd, getter, streams, fleetCommand{name: "status", finding: true, jsonLines: opts.output == eventsOutput || opts.output == "json",
				applier: func() (applierConfig, error) { return applierConfig{}, nil },
				run: func(ctx context.Context, getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, run clusterRun) error {
					return runStatus(ctx, getter, streams, args, opts, run)
				}})
		},
	}
	contexts.add(cmd)
	opts.files.add(cmd, "file, directory or URL with the objects to inspect")
	cmd.Flags().StringVarP(&opts.output, "output", "o", "", `"json" for scripts; default: text`)
	cmd.Flags().StringVar(&opts.fieldManager, "field-manager", apply.ClientSideFieldManager, "the field manager apply writes as; its fields (and those of kubectl's and kapply's apply) are not foreign")
	opts.ignore.addFlags(cmd.Flags())
	return cmd
}

func runStatus(ctx context.Context, getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, args []string, opts statusOptions, run clusterRun) error {
	if opts.output != "" && opts.output != "json" {
		return withCode(exitError, fmt.Errorf(`--output must be "json" or empty, not %q`, opts.output))
	}
	filter, err := opts.ignore.driftFilter()
	if err != nil {
		return err
	}
	targets, err := opts.files.connectTargets(ctx, getter, streams.In, args, statusReadFailed, applierConfig{}.withApplier(run))
	if err != nil {
		return err
	}
	statuses, err := targets.applier.Status(ctx, targets.input(), apply.StatusOptions{FieldManager: opts.fieldManager, FilterDrift: filter})
	if err != nil {
		return withCode(exitError, err)
	}
	warnings := newCommandWarnings(streams.ErrOut)
	for i, s := range statuses {
		warnings.print(s.Warnings)
		diff.MaskDrift(s.Drift, targets.targets[i].Obj.Object)
	}
	run.report.setStatuses(statuses)
	if opts.output == "json" {
		if err := printStatusJSON(streams.Out, statuses); err != nil {
			return err
		}
	} else {
		printStatusText(streams.Out, statuses)
	}
	return statusExit(statuses)
}

// statusReadFailed is status's exit for files it could not read: exit 1
// is drift, so a refused server is kubectl's sentence with exit 2.
func statusReadFailed(err error) error {
	unreachable, _ := asUnreachable(err)
	return withCode(exitError, unreachable)
}

// statusExit is 1 when some object is not in step with its last apply.
func statusExit(statuses []apply.ObjectStatus) error {
	for _, s := range statuses {
		if !inStep(s) {
			return withCode(exitDrift, nil)
		}
	}
	return nil
}

func inStep(s apply.ObjectStatus) bool {
	return s.State == apply.StateApplied && len(s.Changed) == 0 && len(s.Foreign) == 0
}

func printStatusJSON(w io.Writer, statuses []apply.ObjectStatus) error {
	if c, ok := w.(fleetContextWriter); ok {
		// One cluster of a run over several contexts: one line, whole.
		line, err := json.Marshal(struct {
			Context string               `json:"context"`
			Objects []apply.ObjectStatus `json:"objects"`
		}{c.fleetContext(), statuses})
		if err != nil {
			return withCode(exitError, fmt.Errorf("encoding the status: %w", err))
		}
		return writeAll(w, append(line, '\n'))
	}
	out, err := json.MarshalIndent(statuses, "", "  ")
	if err != nil {
		return withCode(exitError, fmt.Errorf("encoding the status: %w", err))
	}
	return writeAll(w, append(out, '\n'))
}

func printStatusText(w io.Writer, statuses []apply.ObjectStatus) {
	for _, s := range statuses {
		switch s.State {
		case apply.StateMissing:
			fmt.Fprintf(w, "%s: not on the server (kapply apply creates it)\n", s.Object)
			continue
		case apply.StateNoRecord:
			fmt.Fprintf(w, "%s: no last-applied record: not managed by apply (kapply adopt hands it over); %s\n", s.Object, healthText(s.Health))
			continue
		}
		if inStep(s) {
			fmt.Fprintf(w, "%s: in step with the last apply; %s\n", s.Object, healthText(s.Health))
			continue
		}
		fmt.Fprintf(w, "%s: %s\n", s.Object, healthText(s.Health))
		printChanged(w, s.Changed)
		printForeign(w, s.Foreign)
	}
}

func printChanged(w io.Writer, changed []ownership.ChangedField) {
	if len(changed) == 0 {
		return
	}
	fmt.Fprintln(w, "  changed since the last apply:")
	for _, c := range changed {
		live := showValue(c.Live)
		if c.LiveMissing {
			live = "(removed)"
		}
		fmt.Fprintf(w, "    %s: last applied %s, live %s%s\n", c.Path, showValue(c.LastApplied), live, byManagers(c.Managers))
	}
}

func printForeign(w io.Writer, foreign []ownership.OwnedField) {
	if len(foreign) == 0 {
		return
	}
	fmt.Fprintln(w, "  set by the file, owned by another manager now:")
	for _, f := range foreign {
		fmt.Fprintf(w, "    %s%s\n", f.Path, byManagers(f.Managers))
	}
}

func byManagers(managers []string) string {
	if len(managers) == 0 {
		return ""
	}
	return " (owned by " + strings.Join(managers, ", ") + ")"
}

// healthText is the object's health as apply --wait sees it: "health:
// Current", or with the reason and message of another status.
func healthText(h *apply.Health) string {
	if h == nil {
		return "health: unknown"
	}
	text := "health: " + h.Status
	switch {
	case h.Status == "Current":
	case h.Reason != "" && h.Message != "":
		text += " (" + h.Reason + ": " + h.Message + ")"
	case h.Reason != "" || h.Message != "":
		text += " (" + h.Reason + h.Message + ")"
	}
	return text
}
