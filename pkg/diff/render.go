package diff

import (
	"fmt"
	"strings"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/kapply/kapply/pkg/shown"
)

// Directory names of the two sides, as kubectl names its temporary ones.
const (
	liveDir   = "LIVE"
	mergedDir = "MERGED"
)

// unified renders one comparison as a unified diff headed like kubectl's
// (`diff -u -N LIVE/NAME MERGED/NAME`) and by the object's source file.
func unified(c Comparison) (string, error) {
	// The names came from files: quoted when they would not show as
	// themselves, so that no header line is erased or forged.
	from, to := liveDir+"/"+shown.Text(c.Object.Name), mergedDir+"/"+shown.Text(c.Object.Name)
	body, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A:        splitLines(c.Live),
		B:        splitLines(c.After),
		FromFile: from,
		ToFile:   to,
		Context:  3,
	})
	if err != nil {
		return "", fmt.Errorf("rendering the diff of %s: %w", c.Object.Ref, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "diff -u -N %s %s\n# %s from %s\n", from, to, shown.Text(c.Object.Ref), shown.Text(c.Object.Source))
	// A value's line may start with "::" after its indent (a block
	// scalar, a name with a newline): the GitHub runner, which reads a
	// step's stdout, would take it for a workflow command.
	b.WriteString(shown.NoCommands(body))
	return b.String(), nil
}

// splitLines splits text after each newline; unlike difflib.SplitLines, it
// adds no empty line at the end, and none at all for empty text.
func splitLines(text string) []string {
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}
