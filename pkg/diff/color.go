package diff

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// ANSI escapes for the lines of a diff.
const (
	ansiReset = "\x1b[0m"
	ansiBold  = "\x1b[1m"
	ansiRed   = "\x1b[31m"
	ansiGreen = "\x1b[32m"
	ansiCyan  = "\x1b[36m"
	ansiDim   = "\x1b[2m"
)

// UseColor decides whether to colour output to out: mode is "always",
// "never" or "auto" (out is a terminal and noColor, the NO_COLOR
// environment variable, is empty).
func UseColor(mode string, out io.Writer, noColor string) (bool, error) {
	switch mode {
	case "always":
		return true, nil
	case "never":
		return false, nil
	case "auto", "":
		return noColor == "" && isTerminal(out), nil
	}
	return false, fmt.Errorf(`--color must be "auto", "always" or "never", not %q`, mode)
}

func isTerminal(out io.Writer) bool {
	f, ok := out.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// colorLine wraps one line of a unified diff (without its newline) in the
// colour of its kind.
func colorLine(line string) string {
	switch {
	case strings.HasPrefix(line, "diff "), strings.HasPrefix(line, "--- "), strings.HasPrefix(line, "+++ "):
		return ansiBold + line + ansiReset
	case strings.HasPrefix(line, "@@"):
		return ansiCyan + line + ansiReset
	case strings.HasPrefix(line, "-"):
		return ansiRed + line + ansiReset
	case strings.HasPrefix(line, "+"):
		return ansiGreen + line + ansiReset
	case strings.HasPrefix(line, "#"):
		return ansiDim + line + ansiReset
	}
	return line
}

// paint colours every line of text when on is set.
func paint(text string, on bool) string {
	if !on || text == "" {
		return text
	}
	lines := strings.SplitAfter(text, "\n")
	for i, line := range lines {
		body := strings.TrimSuffix(line, "\n")
		if body != "" {
			lines[i] = colorLine(body) + line[len(body):]
		}
	}
	return strings.Join(lines, "")
}
