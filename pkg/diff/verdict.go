package diff

import (
	"fmt"
	"strings"

	"github.com/kapply/kapply/pkg/plan"
	"github.com/kapply/kapply/pkg/shown"
)

// VerdictWords are how the output says each outcome of kapply --check.
var VerdictWords = map[plan.Outcome]string{
	plan.Denied: "denied by --check", plan.Warned: "Warning",
	plan.Audited: "audited by --check", plan.Unknown: "unknown to --check",
}

// VerdictText names the policy and binding, and the policy's message
// (shown.Text: a message may quote the object's values).
func VerdictText(v plan.Verdict) string {
	switch {
	case v.Binding != "":
		return fmt.Sprintf("ValidatingAdmissionPolicy %s (binding %s): %s", shown.Text(v.Policy), shown.Text(v.Binding), shown.Text(v.Message))
	case v.Policy != "":
		return fmt.Sprintf("%s: %s", shown.Text(v.Policy), shown.Text(v.Message))
	}
	return shown.Text(v.Message)
}

// explainVerdicts is --explain's line per verdict of --check on the
// object ("# check: denied: ValidatingAdmissionPolicy P (binding B): M"),
// audited ones included.
func explainVerdicts(obj Object) string {
	var b strings.Builder
	for _, v := range obj.Verdicts {
		fmt.Fprintf(&b, "# check: %s: %s\n", v.Outcome, VerdictText(v))
	}
	return b.String()
}

// worstOutcome is the verdict that decides what the server would do with
// the write: a denial over a warning over an unknown over an audit.
func worstOutcome(verdicts []plan.Verdict) plan.Outcome {
	var worst plan.Outcome
	for _, v := range verdicts {
		if outcomeRank[v.Outcome] > outcomeRank[worst] {
			worst = v.Outcome
		}
	}
	return worst
}

var outcomeRank = map[plan.Outcome]int{plan.Audited: 1, plan.Unknown: 2, plan.Warned: 3, plan.Denied: 4}

// checkColumn is the plan table's CHECK column: each verdict's outcome
// and policy ("denied (team)"); "-" when no policy objects.
func checkColumn(it plan.Item) string {
	if len(it.Verdicts) == 0 {
		return "-"
	}
	words := make([]string, len(it.Verdicts))
	for i, v := range it.Verdicts {
		words[i] = string(v.Outcome)
		if v.Policy != "" {
			words[i] += " (" + shown.Text(v.Policy) + ")"
		}
	}
	return strings.Join(words, ", ")
}

// checked reports whether any item of p carries verdicts: the table then
// has a CHECK column.
func checked(p *plan.Plan) bool {
	for _, it := range p.Items {
		if len(it.Verdicts) > 0 {
			return true
		}
	}
	return false
}

// GitHubVerdicts are workflow commands for the verdicts of --check, one
// per denied (::error) or warned (::warning) verdict, on the file and line
// of the object's document.
func GitHubVerdicts(comparisons []Comparison) string {
	var b strings.Builder
	for _, c := range comparisons {
		for _, v := range c.Object.Verdicts {
			command := map[plan.Outcome]string{plan.Denied: "error", plan.Warned: "warning"}[v.Outcome]
			if command == "" {
				continue
			}
			message := c.Identity.String() + ": " + VerdictWords[v.Outcome] + ": " + VerdictText(v)
			b.WriteString(workflowCommand(command, c.Object.Source, c.Object.Line, message))
		}
	}
	return b.String()
}
