package diff

import (
	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/plan"

	"github.com/kapply/kapply/pkg/merge"
)

// Object is one object to diff: what it is now and what apply would make it.
type Object struct {
	// Name is the object's file name, kubectl's group.version.Kind.namespace.name.
	Name string
	// Ref names the object as kubectl prints it (deployment.apps/web -n ns),
	// its parts quoted as shown.Text does (apply.ObjectRef); a Ref that is
	// not is quoted whole where it is printed.
	Ref string
	// ID is the object's identity, for machine-read output (-o events).
	ID plan.ID
	// Source is the file the object came from, Line where its document
	// starts in it (0: unknown).
	Source string
	Line   int
	// Live is the object now; nil when apply would create it.
	Live map[string]any
	// After is the object as apply would leave it; nil when apply would
	// delete it.
	After map[string]any
	// Changes explain the plan that turns Live into After (nil for creates).
	Changes []merge.Change
	// Owners says who owns a field of Live now; nil when unknown.
	Owners Owners
	// Notes are comment lines --explain adds after the reasons (the
	// cause of each changed field, from pkg/ignore).
	Notes string
	// Wave is the wave of a run of several the object is sent in, and
	// why ("2 (sync-wave 1)"); --explain says it. Empty: one wave.
	Wave string
	// Verdicts are kapply --check's on the object's write (plan.Item's).
	Verdicts []plan.Verdict
}

// Owners answers, for a field path, which managers own it now.
type Owners interface {
	Of(p fieldpath.Path) []string
}

// Options choose what is shown.
type Options struct {
	// ShowManaged keeps managedFields, resourceVersion, generation and the
	// last-applied annotations, hidden by default.
	ShowManaged bool
	// ShowSecrets shows Secret values instead of masks.
	ShowSecrets bool
	// Explain adds, after each object's diff, every change with its reason
	// and owners.
	Explain bool
	// Color marks removed, added and header lines with ANSI colours.
	Color bool
	// AllSides renders the sides of unchanged objects too, for an external
	// diff program (External); otherwise only those of objects that differ.
	AllSides bool
}

// Outcome is what apply would do to one object.
type Outcome int

const (
	// Unchanged: live and after show no difference.
	Unchanged Outcome = iota
	// Changed: the object exists and would change.
	Changed
	// Created: the object does not exist and would be created.
	Created
	// Deleted: the object exists and would be deleted (pruned).
	Deleted
)

// Symbol is the outcome's mark in a summary line.
func (o Outcome) Symbol() string {
	switch o {
	case Changed:
		return "~"
	case Created:
		return "+"
	case Deleted:
		return "-"
	default:
		return "="
	}
}
