package main

import (
	"context"
	"errors"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/load"
)

// fileFlags are -f and -R, shared by the ownership commands.
type fileFlags struct {
	filenames []string
	recursive bool
}

func (f *fileFlags) add(cmd *cobra.Command, usage string) {
	cmd.Flags().StringSliceVarP(&f.filenames, "filename", "f", nil, usage+" (repeatable; - for stdin)")
	cmd.Flags().BoolVarP(&f.recursive, "recursive", "R", false, "process the directories given with -f recursively")
}

// options are the files to read, "-" from stdin.
func (f fileFlags) options(stdin io.Reader) load.Files {
	return load.Files{Filenames: f.filenames, Recursive: f.recursive, Stdin: stdin}
}

// recordRun is what the commands working on the records of the objects in
// the files (adopt, release, last-applied set, status) start from.
type recordRun struct {
	targets []*load.Object
	applier *apply.Applier
}

// input is the objects read, as pkg/apply takes them.
func (r recordRun) input() apply.Input {
	return inputOf(r.targets, nil)
}

// connect requires -f, reads the objects of the files and builds an
// applier. readFailure is the command's exit for files it could not read
// (readFailed, or status's, where exit 1 means drift).
func (f fileFlags) connect(ctx context.Context, getter *genericclioptions.ConfigFlags, stdin io.Reader, readFailure func(error) error, cfg applierConfig) (recordRun, error) {
	if len(f.filenames) == 0 {
		return recordRun{}, withCode(exitError, errors.New("must specify -f"))
	}
	targets, err := known(load.ReadFiles(ctx, getter, f.options(stdin)))
	if err != nil {
		return recordRun{}, readFailure(err)
	}
	applier, err := newApplier(getter, cfg)
	if err != nil {
		return recordRun{}, withCode(exitError, err)
	}
	return recordRun{targets: targets, applier: applier}, nil
}

// recordWriteFlags are the flags of the commands that write only the
// record (adopt, release, last-applied set): -f, -R, --dry-run and
// --field-manager.
type recordWriteFlags struct {
	files        fileFlags
	dryRun       string
	fieldManager string
}

func (f *recordWriteFlags) add(cmd *cobra.Command, filesUsage string) {
	f.files.add(cmd, filesUsage)
	addDryRunFlag(cmd, &f.dryRun, dryRunUsage)
	addFieldManagerFlag(cmd, &f.fieldManager)
}

// write is --dry-run and --field-manager as pkg/apply takes them.
func (f recordWriteFlags) write() (apply.RecordWrite, error) {
	dryRun, err := parseDryRun(f.dryRun)
	if err != nil {
		return apply.RecordWrite{}, withCode(exitError, err)
	}
	return apply.RecordWrite{DryRun: dryRun, FieldManager: f.fieldManager}, nil
}

// start is write, then connect: --dry-run is checked before -f, as
// kubectl's set-last-applied does.
func (f recordWriteFlags) start(ctx context.Context, getter *genericclioptions.ConfigFlags, stdin io.Reader) (apply.RecordWrite, recordRun, error) {
	write, err := f.write()
	if err != nil {
		return apply.RecordWrite{}, recordRun{}, err
	}
	run, err := f.files.connect(ctx, getter, stdin, readFailed, applierConfig{})
	return write, run, err
}
