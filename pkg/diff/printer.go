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

// Rendered returns c with what Print writes for it rendered now, and its
// YAML and Changes dropped: a diff of many objects then holds, until it
// prints, the text of each diff instead of both sides of every object.
// External cannot take the result, which has no sides left.
func (p Printer) Rendered(c Comparison) (Comparison, error) {
	text, err := p.render(c)
	if err != nil {
		return c, err
	}
	c.rendered, c.isRendered = text, true
	c.Live, c.After, c.Object.Changes, c.Object.Owners = "", "", nil, nil
	return c, nil
}

// render is what Print writes for one comparison.
func (p Printer) render(c Comparison) (string, error) {
	if c.isRendered {
		return c.rendered, nil
	}
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
		text += explainWave(c.Object) + explain(c, p.Options) + explainVerdicts(c.Object) + c.Object.Notes
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
