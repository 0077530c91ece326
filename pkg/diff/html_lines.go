package diff

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/kapply/kapply/pkg/merge"
)

// htmlLine is one line of a diff in the HTML report, with the reason of
// the change it shows (empty for context and headers).
type htmlLine struct {
	Class string // "add", "del", "ctx" or "hunk"
	Text  string
	Why   string
}

// diffLines renders c's unified diff line by line, as unified does (three
// lines of context), giving each added or removed line the reason of the
// change that covers it: the change whose path's fields lead to the line's
// key in its side's YAML. difflib's matcher is used directly, not its
// unified writer, because the writer does not say which line of a side a
// diff line is.
func diffLines(c Comparison, opts Options) []htmlLine {
	a, b := splitLines(c.Live), splitLines(c.After)
	keysA, keysB := yamlKeyPaths(a), yamlKeyPaths(b)
	var out []htmlLine
	for _, group := range difflib.NewMatcher(a, b).GetGroupedOpCodes(3) {
		first, last := group[0], group[len(group)-1]
		out = append(out, htmlLine{Class: "hunk", Text: fmt.Sprintf("@@ -%s +%s @@", hunkRange(first.I1, last.I2), hunkRange(first.J1, last.J2))})
		for _, op := range group {
			if op.Tag == 'e' {
				for i := op.I1; i < op.I2; i++ {
					out = append(out, htmlLine{Class: "ctx", Text: " " + trimNewline(a[i])})
				}
				continue
			}
			if op.Tag == 'r' || op.Tag == 'd' {
				for i := op.I1; i < op.I2; i++ {
					out = append(out, htmlLine{Class: "del", Text: "-" + trimNewline(a[i]), Why: why(c, keysA[i], opts)})
				}
			}
			if op.Tag == 'r' || op.Tag == 'i' {
				for j := op.J1; j < op.J2; j++ {
					out = append(out, htmlLine{Class: "add", Text: "+" + trimNewline(b[j]), Why: why(c, keysB[j], opts)})
				}
			}
		}
	}
	return out
}

// hunkRange is a side's range in a hunk header, as unified diff writes it.
func hunkRange(start, stop int) string {
	length := stop - start
	switch length {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, length)
}

func trimNewline(s string) string { return strings.TrimSuffix(s, "\n") }

// why is the explanation of the change covering the line at keys, with
// Secret values masked as --explain masks them; empty when none does.
func why(c Comparison, keys []string, opts Options) string {
	best, bestLen := -1, -1
	for i, ch := range c.Object.Changes {
		if ch.Reason == merge.KeptUnmanaged {
			continue
		}
		fields := fieldsOf(ch)
		if len(fields) > bestLen && len(fields) <= len(keys) && equalStrings(fields, keys[:len(fields)]) {
			best, bestLen = i, len(fields)
		}
	}
	if best < 0 {
		return ""
	}
	return explainChange(c, c.Object.Changes[best], opts)
}

// fieldsOf is the change's path without its list elements: the keys a
// YAML line's indentation shows.
func fieldsOf(ch merge.Change) []string {
	var fields []string
	for _, e := range ch.Path {
		if e.IsField() {
			fields = append(fields, e.Field)
		}
	}
	return fields
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// yamlKeyPaths gives each line of block YAML, as toYAML writes it, the
// keys that lead to it by indentation ("- " starts a list item and adds no
// key). Lines of a block scalar get the keys of the scalar's field. It
// reads only the shape of the emitter's output, which is why a parser is
// not used: a parser does not say which line a value is on.
func yamlKeyPaths(lines []string) [][]string {
	type level struct {
		indent int
		key    string
	}
	var stack []level
	scalarIndent := -1 // the indent of the key whose block scalar goes on
	out := make([][]string, len(lines))
	for i, line := range lines {
		text := strings.TrimRight(line, "\n")
		rest := strings.TrimLeft(text, " ")
		indent := len(text) - len(rest)
		if scalarIndent >= 0 && (indent > scalarIndent || rest == "") {
			out[i] = out[i-1]
			continue
		}
		scalarIndent = -1
		for strings.HasPrefix(rest, "- ") || rest == "-" {
			indent += 2
			rest = strings.TrimPrefix(strings.TrimPrefix(rest, "-"), " ")
		}
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		key, value, ok := yamlKey(rest)
		if ok {
			stack = append(stack, level{indent, key})
			if strings.HasPrefix(value, "|") || strings.HasPrefix(value, ">") {
				scalarIndent = indent
			}
		}
		keys := make([]string, len(stack))
		for j, l := range stack {
			keys[j] = l.key
		}
		out[i] = keys
	}
	return out
}

// yamlKey splits a line of a block mapping, `key:` or `key: value` (the
// key maybe quoted), into its key and value.
func yamlKey(rest string) (key, value string, ok bool) {
	if rest == "" || rest[0] == '#' {
		return "", "", false
	}
	if rest[0] == '"' || rest[0] == '\'' {
		end := strings.IndexByte(rest[1:], rest[0]) + 1
		if end <= 0 || !strings.HasPrefix(rest[end+1:], ":") {
			return "", "", false
		}
		key = rest[1:end]
		if unquoted, err := strconv.Unquote(rest[:end+1]); err == nil && rest[0] == '"' {
			key = unquoted
		}
		return key, strings.TrimSpace(rest[end+2:]), true
	}
	colon := strings.Index(rest, ": ")
	if colon < 0 && strings.HasSuffix(rest, ":") {
		colon = len(rest) - 1
	}
	if colon <= 0 {
		return "", "", false
	}
	return rest[:colon], strings.TrimSpace(rest[colon+1:]), true
}
