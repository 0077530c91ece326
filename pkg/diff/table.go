package diff

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"k8s.io/cli-runtime/pkg/printers"

	"github.com/kapply/kapply/pkg/plan"
	"github.com/kapply/kapply/pkg/shown"
)

// maxTableFields bounds the fields a row names; the rest are counted.
const maxTableFields = 3

// WritePlanTable writes the plan for a reviewer: a row per object the plan
// changes (NAMESPACE KIND NAME OPERATION FIELDS REASON; prune and delete
// rows marked "(deletes)"), then a count per operation. Unchanged objects
// are counted, not listed. It names fields, never values.
func WritePlanTable(w io.Writer, p *plan.Plan) {
	counts := map[plan.Action]int{}
	tw := printers.GetNewTabWriter(w)
	// A plan of several waves says each item's wave and why, first.
	waves := len(p.Gates) > 1
	if waves {
		fmt.Fprint(tw, "WAVE\t")
	}
	fmt.Fprint(tw, "NAMESPACE\tKIND\tNAME\tOPERATION\tFIELDS\tREASON")
	// A checked plan (kapply --check) says each item's verdicts.
	check := checked(p)
	if check {
		fmt.Fprint(tw, "\tCHECK")
	}
	fmt.Fprintln(tw)
	for _, it := range p.Items {
		counts[it.Action]++
		if it.Action == plan.Unchanged {
			continue
		}
		// Names came from files: quoted when they hold a character that
		// does not show as itself (a CR or an escape sequence could erase
		// the row of another object's patch, which would still run).
		ns := shown.Text(it.ID.Namespace)
		if ns == "" {
			ns = "-"
		}
		kind := it.ID.Kind
		if it.ID.Group != "" {
			kind += "." + it.ID.Group
		}
		fields, reason := describeItem(it)
		if waves {
			fmt.Fprintf(tw, "%s\t", waveColumn(it))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s", ns, shown.Text(kind), shown.Text(it.ID.Name), operationOf(it.Action), fields, reason)
		if check {
			fmt.Fprintf(tw, "\t%s", checkColumn(it))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	line := fmt.Sprintf("Plan: %d to create, %d to patch", counts[plan.Create], counts[plan.Update])
	for _, c := range []struct {
		action plan.Action
		words  string
	}{{plan.Apply, "to apply server-side"}, {plan.Prune, "to prune (delete)"}, {plan.Delete, "to delete"}} {
		if n := counts[c.action]; n > 0 {
			line += fmt.Sprintf(", %d %s", n, c.words)
		}
	}
	fmt.Fprintf(w, "%s, %d unchanged.\n", line, counts[plan.Unchanged])
}

// operationOf is the OPERATION column: removals are marked.
func operationOf(a plan.Action) string {
	switch a {
	case plan.Prune:
		return "prune (deletes)"
	case plan.Delete:
		return "delete (deletes)"
	case plan.Apply:
		return "server-side apply"
	}
	return string(a)
}

// describeItem is the FIELDS and REASON columns: the paths the item
// changes (the last-applied record left out: every write changes it) and
// their reasons, each named once.
func describeItem(it plan.Item) (fields, reason string) {
	switch it.Action {
	case plan.Create:
		return "-", "not in the cluster"
	case plan.Prune:
		return "-", "no longer in the files"
	case plan.Delete:
		return "-", "deleted"
	}
	var paths, reasons []string
	for _, c := range it.Changes {
		// Kept fields are not written (Verify skips them too).
		if isRecordAnnotation(c.Path) || c.Reason == plan.KeptUnmanaged {
			continue
		}
		paths = append(paths, c.Path.String())
		if !slices.Contains(reasons, string(c.Reason)) {
			reasons = append(reasons, string(c.Reason))
		}
	}
	if len(paths) == 0 {
		if it.Action == plan.Apply {
			return "(merged by the server)", "set-by-file"
		}
		return "(last-applied record)", "record"
	}
	if len(paths) > maxTableFields {
		paths = append(paths[:maxTableFields], fmt.Sprintf("and %d more", len(paths)-maxTableFields))
	}
	return strings.Join(paths, ", "), strings.Join(reasons, ", ")
}

// waveColumn is the WAVE column: the item's wave, and why in brackets.
func waveColumn(it plan.Item) string {
	if it.WaveReason == "" {
		return fmt.Sprint(it.Wave)
	}
	return fmt.Sprintf("%d (%s)", it.Wave, shown.Text(it.WaveReason))
}
