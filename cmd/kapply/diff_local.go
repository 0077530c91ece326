package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/kapply/kapply/pkg/apply"
	kcluster "github.com/kapply/kapply/pkg/cluster"
)

// localServerSide tells whether diff computes server-side apply locally
// (--local or --dry-run=client with --server-side), which apply refuses:
// apply --dry-run=client --server-side would mislead (kubectl refuses it
// too), but a preview labelled as computed locally is what a user with
// read access only can have.
func (opts diffOptions) localServerSide() bool {
	return opts.serverSide && (opts.local || opts.dryRun == "client")
}

// withLocalServerSide makes runOpts, checked as a server dry run, compute
// server-side apply locally, and labels the diff so on w (stderr: the
// diff's own output stays what a diff program or a JSON reader expects).
func (opts diffOptions) withLocalServerSide(runOpts apply.Options, w io.Writer) apply.Options {
	if opts.localServerSide() {
		runOpts.DryRun = kcluster.ClientDryRun
		fmt.Fprintf(w, "# computed locally: %s\n", apply.LocalServerSideNote)
	}
	return runOpts
}

// failureMessage is an object's failure as diff prints it: a dry run the
// server refused (403) names the way to preview with read access only.
func failureMessage(err error) string {
	var refused *apply.DryRunRefusedError
	if !errors.As(err, &refused) {
		return fmt.Sprintf("error: %v", err)
	}
	where := refused.Ref
	var objectErr *apply.ObjectError
	if errors.As(err, &objectErr) && objectErr.Source.File != "" {
		where += " (from " + objectErr.Source.File + ")"
	}
	return fmt.Sprintf("error: the server refused the dry run of %s (forbidden: %v); to preview with read access only use --local", where, refused.Err)
}
