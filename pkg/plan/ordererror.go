package plan

import (
	"strconv"
	"strings"

	"github.com/kapply/kapply/pkg/shown"
)

// OrderProblemKind says why a declared order cannot run.
type OrderProblemKind string

const (
	InvalidSyncWave     OrderProblemKind = "invalid sync-wave"
	InvalidDependsOn    OrderProblemKind = "invalid depends-on"
	DuplicateDependency OrderProblemKind = "duplicate dependency"
	DependencyNotInRun  OrderProblemKind = "dependency not in the run"
	DependencyLaterWave OrderProblemKind = "dependency in a later wave"
	DependencyCycle     OrderProblemKind = "dependency cycle"
)

// OrderProblem is one object whose declared order cannot run.
type OrderProblem struct {
	Kind   OrderProblemKind
	Node   int    // the object's index in Order's input
	Object ID     // the object
	Source Source // where it was read from
	Detail string // what is wrong, in words (values from the file shown quoted)
	// Cycle, for DependencyCycle: the members in order, each depending on
	// the next and the last on the first (Cycle[0] is Object).
	Cycle []ID
}

func (p OrderProblem) String() string {
	return p.Source.where() + p.what()
}

// where is "file:line: " (or "file: "), empty for an object built in code.
func (s Source) where() string {
	switch {
	case s.File == "":
		return ""
	case s.Line > 0:
		return shown.Text(s.File) + ":" + strconv.Itoa(s.Line) + ": "
	default:
		return shown.Text(s.File) + ": "
	}
}

func (p OrderProblem) what() string {
	if p.Kind == DependencyCycle {
		names := make([]string, 0, len(p.Cycle)+1)
		for _, id := range p.Cycle {
			names = append(names, id.String())
		}
		names = append(names, p.Cycle[0].String())
		return "depends-on cycle: " + strings.Join(names, " → ") + " (→ reads \"depends on\")"
	}
	return p.Object.String() + ": " + p.Detail
}

// OrderError is a declared order that cannot run: nothing is written.
// It lists every problem found, in the order of the input.
type OrderError struct {
	Problems []OrderProblem
}

func (e *OrderError) Error() string {
	if len(e.Problems) == 1 {
		return "ordering the run: " + e.Problems[0].String()
	}
	var b strings.Builder
	b.WriteString("ordering the run: ")
	b.WriteString(strconv.Itoa(len(e.Problems)))
	b.WriteString(" problems")
	for _, p := range e.Problems {
		b.WriteString("; ")
		b.WriteString(p.String())
	}
	return b.String()
}
