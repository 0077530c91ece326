package main

import (
	"strings"

	"github.com/kapply/kapply/pkg/apply"
)

// The library's messages name the option that explains or cures a failure
// as its options field ("set WriteOptions.ForceConflicts to take them"); the
// CLI shows the flag a user types instead, in every line it prints about
// an object and in its final error.
var flagWords = strings.NewReplacer(
	"the files' objects (ExecuteOptions.Objects)", "the files given with -f",
	"WriteOptions.ForceConflicts", "--force-conflicts",
	"prune.Options.AllowEmpty", "--prune-allow-empty",
	"prune.Options.Allowlist", "--prune-allowlist",
	"prune.Options.ApplySet", "--applyset",
	"WriteOptions.FieldManager", "--field-manager",
	"WriteOptions.Namespace", "--namespace",
	"WriteOptions.NoOverwrite", "--overwrite=false",
	"Options.Force", "--force",
	"Options.Timeout", "--timeout",
)

// withFlagNames is err with its options named as flags; it still unwraps
// to err. nil stays nil.
func withFlagNames(err error) error {
	if err == nil {
		return nil
	}
	text := err.Error()
	if named := flagWords.Replace(text); named != text {
		return &shownError{text: named, err: err}
	}
	return err
}

// eventsWithFlagNames names options as flags in the events' errors and
// warnings.
func eventsWithFlagNames(events []apply.Event) []apply.Event {
	out := make([]apply.Event, len(events))
	for i, ev := range events {
		out[i] = ev
		out[i].Err = withFlagNames(ev.Err)
		if len(ev.Warnings) > 0 {
			out[i].Warnings = make([]string, len(ev.Warnings))
			for j, w := range ev.Warnings {
				out[i].Warnings[j] = flagWords.Replace(w)
			}
		}
	}
	return out
}
