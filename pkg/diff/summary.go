package diff

import (
	"fmt"

	"github.com/kapply/kapply/pkg/shown"
)

// summaryLine is one object in a line: `~ deployment.apps/web  3 fields`,
// `+ configmap/new`, `= service/api`.
func summaryLine(c Comparison) string {
	line := c.Outcome.Symbol() + " " + shown.Text(c.Object.Ref)
	if c.Outcome == Changed {
		line += fmt.Sprintf("  %d %s", c.Fields, plural(c.Fields, "field"))
	}
	return line + "\n"
}

// summaryColor is the colour of an outcome's summary line.
func summaryColor(o Outcome) string {
	switch o {
	case Changed:
		return ansiCyan
	case Created:
		return ansiGreen
	case Deleted:
		return ansiRed
	}
	return ""
}
