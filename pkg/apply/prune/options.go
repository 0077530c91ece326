package prune

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapply/kapply/pkg/history"
)

// Options say what a run deletes that the files no longer declare:
// members of ApplySet when it is set, else (kubectl's older form) objects
// matching Selector of the kinds in Allowlist.
type Options struct {
	// Selector is the label selector the objects were loaded with
	// (kubectl's -l); selector pruning deletes what matches it.
	Selector string
	// ApplySet is the parent reference [RESOURCE[.GROUP]/]NAME (KEP-3659).
	ApplySet string
	// Allowlist lists group/version/kind entries for selector pruning.
	Allowlist []string
	// All is kubectl's --all: prune by selector with neither Selector nor
	// ApplySet, every allowlisted object the input does not declare.
	// Without it such a run is refused (a zero Options pruned the whole
	// namespace).
	All bool
	// AllowEmpty lets a run with no objects prune every member.
	AllowEmpty bool
	// History, with ApplySet, records each run that changes the set's
	// configuration as a revision of it (see pkg/history).
	History *history.Options
	// Cascade is the propagation policy of pruning's deletions.
	Cascade metav1.DeletionPropagation
}
