package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/load"
)

// migrateOptions are the flags of `kapply migrate`.
type migrateOptions struct {
	files           fileFlags
	to              string
	dryRun          string
	fieldManager    string
	fromManagers    []string
	forceConflicts  bool
	keepLastApplied bool
}

func newMigrateCommand(getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var opts migrateOptions
	cmd := &cobra.Command{
		Use:   "migrate --to=server-side|client-side -f FILENAME",
		Short: "Move objects between client-side and server-side apply without leaking fields",
		Long: `Hand the field ownership of the objects in the files from client-side apply to a
server-side manager (--to=server-side), or back (--to=client-side), changing no value.

--to=server-side hands over every field of client-side apply's managers
(kubectl-client-side-apply, kapply, and whoever wrote the last-applied record),
as kubectl apply --server-side does, and also the fields the last-applied record
names that kubectl create or the server's before-first-apply still own (and the
managers given with --from-manager): kubectl leaves those, so a field dropped
from the file later survives every server-side apply (kubernetes#99003).
Fields of the record that other managers set to other values since would
conflict at the next server-side apply: they are listed, and the object is
refused unless --force-conflicts takes them. The last-applied record is kept,
as kubectl keeps it, unless --keep-last-applied=false.

--to=client-side hands the server-side manager's fields to
kubectl-client-side-apply and records them as the last-applied configuration,
so that client-side apply deletes what the file drops again.

Only the objects' identities are read from the files; use --dry-run to see the plan.`,
		Example: `  # See, then do, the move of the objects in dir/ to kubectl apply --server-side
  kapply migrate --to=server-side -f dir/ --dry-run=server
  kapply migrate --to=server-side -f dir/

  # Back to client-side apply
  kapply migrate --to=client-side -f dir/`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runMigrate(cmd.Context(), getter, streams, opts)
		},
	}
	opts.files.add(cmd, "file, directory or URL with the objects to migrate")
	cmd.Flags().StringVar(&opts.to, "to", "", `"server-side" or "client-side"`)
	addDryRunFlag(cmd, &opts.dryRun, dryRunUsage)
	cmd.Flags().StringVar(&opts.fieldManager, "field-manager", apply.ServerSideFieldManager, "the server-side field manager")
	cmd.Flags().StringArrayVar(&opts.fromManagers, "from-manager", nil, "another manager whose fields the last-applied record names go over too (repeatable)")
	cmd.Flags().BoolVar(&opts.forceConflicts, "force-conflicts", false, "take the record's fields other managers set to other values")
	cmd.Flags().BoolVar(&opts.keepLastApplied, "keep-last-applied", true, "keep the last-applied record (--to=server-side)")
	return cmd
}

func runMigrate(ctx context.Context, getter *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, opts migrateOptions) error {
	migrateOpts, err := opts.toOptions()
	if err != nil {
		return withCode(exitError, err)
	}
	targets, err := known(load.ReadFiles(ctx, getter, opts.files.options(streams.In)))
	if err != nil {
		return readFailed(err)
	}
	applier, err := newApplier(getter, applierConfig{})
	if err != nil {
		return withCode(exitError, err)
	}
	migrations, err := applier.Migrate(ctx, inputOf(targets, nil), migrateOpts)
	if err != nil {
		return writeFailed(fmt.Errorf("%w; nothing was changed", err))
	}
	failed := 0
	for _, m := range migrations {
		if m.Skip != nil {
			fmt.Fprintf(streams.ErrOut, "%s skipped: %v\n", apply.ObjectName(m.Object), m.Skip)
			continue
		}
		failed += printEach(streams, []apply.RecordResult{m.RecordResult}, migrateOpts.DryRun, "migrated")
		printMigration(streams, m, receiver(migrateOpts))
	}
	return someFailed(failed, len(migrations), "could not be migrated")
}

func (o migrateOptions) toOptions() (apply.MigrateOptions, error) {
	dryRun, err := parseDryRun(o.dryRun)
	if err != nil {
		return apply.MigrateOptions{}, err
	}
	if len(o.files.filenames) == 0 {
		return apply.MigrateOptions{}, errors.New("must specify -f")
	}
	out := apply.MigrateOptions{DryRun: dryRun, FieldManager: o.fieldManager, FromManagers: o.fromManagers,
		ForceConflicts: o.forceConflicts, DropLastApplied: !o.keepLastApplied}
	switch o.to {
	case "server-side":
		out.To = apply.ToServerSide
	case "client-side":
		out.To = apply.ToClientSide
	default:
		return out, fmt.Errorf(`--to must be "server-side" or "client-side", not %q`, o.to)
	}
	return out, nil
}

// receiver is the manager the fields go to.
func receiver(o apply.MigrateOptions) string {
	if o.To == apply.ToClientSide {
		return apply.ClientSideFieldManager
	}
	return o.FieldManager
}

// printMigration prints the plan of one object under its result line.
func printMigration(streams genericiooptions.IOStreams, m apply.Migration, to string) {
	if m.Err != nil && len(m.Conflicts) > 0 {
		return // the error lists them
	}
	printFields(streams, m.HandedOver, "  to "+to+" from %s: %s\n")
	printFields(streams, m.Conflicts, "  taken from %s (--force-conflicts): %s\n")
	printFields(streams, m.Shared, "  also owned by %s: %s\n")
	printFields(streams, m.Left, "  not in the record, left to no manager by %s: %s\n")
}

// maxFieldsShown bounds each printed list of fields.
const maxFieldsShown = 8

func printFields(streams genericiooptions.IOStreams, byManager map[string][]string, format string) {
	managers := make([]string, 0, len(byManager))
	for manager := range byManager {
		managers = append(managers, manager)
	}
	sort.Strings(managers)
	for _, manager := range managers {
		fields := byManager[manager]
		shown := strings.Join(fields[:min(len(fields), maxFieldsShown)], ", ")
		if len(fields) > maxFieldsShown {
			shown += fmt.Sprintf(" and %d more", len(fields)-maxFieldsShown)
		}
		fmt.Fprintf(streams.Out, format, manager, shown)
	}
}
