package diff

import (
	"fmt"

	"github.com/kapply/kapply/pkg/shown"
)

// Operation is what apply would do to an object, in the words of the CI
// reports (markdown, HTML).
type Operation string

// The operations, in the order the reports count them.
const (
	OpCreate    Operation = "create"
	OpUpdate    Operation = "update"
	OpUnchanged Operation = "unchanged"
	OpPrune     Operation = "prune"
	OpFailed    Operation = "failed"
)

// operations is every operation, in the order of the reports' summaries.
var operations = []Operation{OpCreate, OpUpdate, OpUnchanged, OpPrune, OpFailed}

// Operation is the outcome as a report's operation.
func (o Outcome) Operation() Operation {
	switch o {
	case Created:
		return OpCreate
	case Changed:
		return OpUpdate
	case Deleted:
		return OpPrune
	}
	return OpUnchanged
}

// Identity names an object in a report: its kind, namespace and name.
type Identity struct {
	Kind, Namespace, Name string
}

// String is "Kind namespace/name", or "Kind name" for a cluster-scoped
// object.
func (i Identity) String() string {
	if i.Namespace == "" {
		return fmt.Sprintf("%s %s", shown.Text(i.Kind), shown.Text(i.Name))
	}
	return fmt.Sprintf("%s %s/%s", shown.Text(i.Kind), shown.Text(i.Namespace), shown.Text(i.Name))
}

// identityOf reads the identity off the first of the sides that is set.
func identityOf(sides ...map[string]any) Identity {
	for _, obj := range sides {
		if obj == nil {
			continue
		}
		kind, _ := obj["kind"].(string)
		meta, _ := obj["metadata"].(map[string]any)
		ns, _ := meta["namespace"].(string)
		name, _ := meta["name"].(string)
		return Identity{Kind: kind, Namespace: ns, Name: name}
	}
	return Identity{}
}

// Failure is an object that could not be diffed, as the reports list it.
type Failure struct {
	Identity
	// File and Line are where the object's document starts (Line 0:
	// unknown; File empty: not from a file).
	File string
	Line int
	// Message is the error, its Secret values already masked.
	Message string
}

// label is the failure's line in a report: "failed Kind ns/name", or
// the file when the object is not known (a file that could not be read),
// or "(no object)" for a failure of the run (pruning refused).
func (f Failure) label() string {
	switch {
	case f.Kind == "" && f.Name == "" && f.File == "":
		return fmt.Sprintf("%s (no object)", OpFailed)
	case f.Kind == "" && f.Name == "":
		return fmt.Sprintf("%s %s", OpFailed, shown.Text(f.File))
	}
	return fmt.Sprintf("%s %s", OpFailed, f.Identity)
}

// where is the failure's file and line, as the reports print them.
func (f Failure) where() string {
	if f.Line > 0 {
		return fmt.Sprintf("%s:%d", shown.Text(f.File), f.Line)
	}
	return shown.Text(f.File)
}

// label is the comparison's line in a report: "update Kind ns/name".
func (c Comparison) label() string {
	return fmt.Sprintf("%s %s", c.Outcome.Operation(), c.Identity)
}

// opCount is one row of a report's summary.
type opCount struct {
	Operation Operation
	Count     int
}

// countOperations counts the objects of each operation, every operation
// listed (zero counts too), in the order of operations.
func countOperations(comparisons []Comparison, failures []Failure) []opCount {
	by := map[Operation]int{OpFailed: len(failures)}
	for _, c := range comparisons {
		by[c.Outcome.Operation()]++
	}
	out := make([]opCount, len(operations))
	for i, op := range operations {
		out[i] = opCount{op, by[op]}
	}
	return out
}

// diffText is the unified diff of a comparison that differs, as Print
// shows it without colour; a comparison Printer.Rendered already rendered
// (its sides dropped) gives that text.
func diffText(c Comparison) (string, error) {
	if c.isRendered {
		return c.rendered, nil
	}
	return unified(c)
}
