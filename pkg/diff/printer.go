package diff

import (
	"fmt"
	"io"
)

// Printer writes comparisons: a unified diff of each object that differs
// (with its explanation under Options.Explain), or one summary line for
// every object.
type Printer struct {
	Options Options
	Summary bool
}

// Print writes every comparison to w, in order.
func (p Printer) Print(w io.Writer, comparisons []Comparison) error {
	for _, c := range comparisons {
		text, err := p.render(c)
		if err != nil {
			return err
		}
		if _, err := io.WriteString(w, text); err != nil {
			return fmt.Errorf("writing the diff of %s: %w", c.Object.Ref, err)
		}
	}
	return nil
}

// render is what Print writes for one comparison.
func (p Printer) render(c Comparison) (string, error) {
	if p.Summary {
		return p.summary(c), nil
	}
	if c.Outcome == Unchanged {
		return "", nil
	}
	text, err := unified(c)
	if err != nil {
		return "", err
	}
	if p.Options.Explain {
		text += explain(c, p.Options)
	}
	return paint(text, p.Options.Color), nil
}

func (p Printer) summary(c Comparison) string {
	line := summaryLine(c)
	color := summaryColor(c.Outcome)
	if !p.Options.Color || color == "" {
		return line
	}
	return color + line[:len(line)-1] + ansiReset + "\n"
}
