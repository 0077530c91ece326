package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// flagError reports a flag cobra could not parse (unknown, or a value of
// the wrong type) in kubectl's words and with its exit code, so scripts
// written for kubectl read the same failure: 1 with
// "See 'kubectl apply --help' for usage.", except for diff, whose 1 means
// "differences found": there kubectl says "See 'kubectl diff -h' for help
// and examples" and exits 2.
func flagError(c *cobra.Command, err error) error {
	if c.Name() == "diff" {
		fmt.Fprintf(c.ErrOrStderr(), "error: %v\nSee '%s -h' for help and examples\n", err, c.CommandPath())
		return withCode(exitError, nil)
	}
	fmt.Fprintf(c.ErrOrStderr(), "error: %v\nSee '%s --help' for usage.\n", err, c.CommandPath())
	return withCode(exitFailed, nil)
}
