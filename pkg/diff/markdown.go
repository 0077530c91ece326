package diff

import (
	"fmt"
	"strings"

	"github.com/kapply/kapply/pkg/plan"
	"github.com/kapply/kapply/pkg/shown"
)

// Byte budgets of a markdown report: GitHub refuses a pull request comment
// over 65,536 characters, so the default leaves room for a few lines the
// workflow adds; below the minimum the summary and the line saying what
// was cut may not fit.
const (
	DefaultMarkdownBytes = 65000
	MinMarkdownBytes     = 1024
)

// cutReserve is kept free, while objects still follow, for the line that
// names the objects cut.
const cutReserve = 400

// Markdown renders a report for a pull request or a CI job summary: a
// table counting the objects of each operation, then a collapsed
// <details> block per object that changes or failed, holding its diff (or
// error) in a fence no value can close. The report is cut to maxBytes
// (DefaultMarkdownBytes when 0): the objects that do not fit are left out
// whole, from the first that does not fit on, and a last line names them.
func Markdown(comparisons []Comparison, failures []Failure, maxBytes int) (string, error) {
	if maxBytes == 0 {
		maxBytes = DefaultMarkdownBytes
	}
	if maxBytes < MinMarkdownBytes {
		return "", fmt.Errorf("the markdown budget must be at least %d bytes, not %d", MinMarkdownBytes, maxBytes)
	}
	blocks, err := markdownBlocks(comparisons, failures)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(MarkdownSummary(comparisons, failures))
	for i, block := range blocks {
		room := maxBytes - b.Len()
		if i < len(blocks)-1 {
			room -= cutReserve
		}
		if len(block.text) > room {
			b.WriteString(cutLine(blocks[i:], maxBytes-b.Len(), maxBytes))
			break
		}
		b.WriteString(block.text)
	}
	return b.String(), nil
}

// MarkdownSummary is the report's heading and its table of counts.
func MarkdownSummary(comparisons []Comparison, failures []Failure) string {
	var b strings.Builder
	b.WriteString("### kapply diff\n\n| operation | objects |\n| --- | ---: |\n")
	for _, row := range countOperations(comparisons, failures) {
		fmt.Fprintf(&b, "| %s | %d |\n", row.Operation, row.Count)
	}
	b.WriteString("\n")
	return b.String()
}

// markdownBlock is one object's <details> block.
type markdownBlock struct {
	label, text string
}

// markdownBlocks are the blocks of the failures, then of the objects that
// differ, in order; unchanged objects are only counted.
func markdownBlocks(comparisons []Comparison, failures []Failure) ([]markdownBlock, error) {
	var blocks []markdownBlock
	for _, f := range failures {
		where := f.where()
		text := f.Message
		if where != "" {
			text = where + ": " + text
		}
		blocks = append(blocks, detailsBlock(f.label(), "text", text))
	}
	for _, c := range comparisons {
		if c.Outcome == Unchanged {
			continue
		}
		text, err := diffText(c)
		if err != nil {
			return nil, err
		}
		label := c.label()
		if worst := worstOutcome(c.Object.Verdicts); worst == plan.Denied || worst == plan.Warned {
			label += " (" + VerdictWords[worst] + ")"
		}
		blocks = append(blocks, detailsBlock(label, "diff", explainVerdicts(c.Object)+text))
	}
	return blocks, nil
}

// detailsBlock is a collapsed block titled label holding text in a fence
// of the given language. The label names an object or a file: escaped
// (shown.Markdown), it can neither end the <summary> nor add a table row
// or a link. The text is fenced, and a line of it that the GitHub runner
// would read as a workflow command (the report is printed on stdout,
// which the runner reads) gets a backslash before its "::".
func detailsBlock(label, lang, text string) markdownBlock {
	label = shown.Markdown(label)
	text = shown.NoCommands(text)
	fence := Fence(text)
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return markdownBlock{label: label, text: fmt.Sprintf("<details><summary>%s</summary>\n\n%s%s\n%s%s\n\n</details>\n\n", label, fence, lang, text, fence)}
}

// Fence is a markdown code fence for text: a run of backticks longer than
// any in text (at least three), so that no line of text closes it.
func Fence(text string) string {
	longest, run := 0, 0
	for i := 0; i < len(text); i++ {
		if text[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

// cutLine names the objects left out, as many as fit in room bytes, and
// how many more.
func cutLine(cut []markdownBlock, room, budget int) string {
	head := fmt.Sprintf("**Cut to fit %d bytes: %d %s not shown:** ", budget, len(cut), plural(len(cut), "object"))
	var names []string
	used := len(head) + 2 // the final ".\n"
	for i, block := range cut {
		more := fmt.Sprintf(", and %d more", len(cut)-i)
		if used+len(block.label)+2+len(more) > room {
			names = append(names, fmt.Sprintf("and %d more", len(cut)-i))
			break
		}
		names = append(names, block.label)
		used += len(block.label) + 2
	}
	return head + strings.Join(names, ", ") + ".\n"
}
