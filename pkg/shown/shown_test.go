package shown

import (
	"strings"
	"testing"
)

// hostileNames are names a file can give an object: each would act on a
// terminal, a log or a report if printed raw.
var hostileNames = map[string]string{
	"carriage return": "a\rb",
	"erase line":      "a\x1b[2Kb",
	"newline":         "a\nb",
	"bidi override":   "a\u202eb",
	"bidi isolate":    "a\u2066b",
	"line separator":  "a\u2028b",
	"C1 CSI":          "a\u009bb",
	"raw 0x9b byte":   "a\x9bb",
	"DEL":             "a\x7fb",
	"zero-width":      "a\u200bb",
	"NUL":             "a\x00b",
	"tab":             "a\tb",
}

func TestTextQuotesWhatDoesNotShowAsItself(t *testing.T) {
	for what, s := range hostileNames {
		got := Text(s)
		if !strings.HasPrefix(got, `"`) || !strings.HasSuffix(got, `"`) {
			t.Errorf("%s: Text(%q) = %q, not quoted", what, s, got)
		}
		if NeedsQuotes(got) {
			t.Errorf("%s: Text(%q) = %q still holds a character that does not show as itself", what, s, got)
		}
	}
	for _, s := range []string{"web", "my app", "ünïcode-名前", "%0A::error::x", "[x](https://e.example)", `"quoted"`, ""} {
		if got := Text(s); got != s {
			t.Errorf("Text(%q) = %q: printable text is kept as it is", s, got)
		}
	}
}

func TestWorkflowEscapes(t *testing.T) {
	if got, want := WorkflowMessage("100%\r\n::error::x"), "100%25%0D%0A::error::x"; got != want {
		t.Errorf("WorkflowMessage = %q, want %q", got, want)
	}
	if got, want := WorkflowProperty("a:b,c%\n"), "a%3Ab%2Cc%25%0A"; got != want {
		t.Errorf("WorkflowProperty = %q, want %q", got, want)
	}
}

func TestNoCommandsLeavesNoLineTheRunnerReads(t *testing.T) {
	text := "error one\n::add-mask::secret\n  ::error::forged\rx\r::warning::y\nkept::as is\n"
	got := NoCommands(text)
	for _, line := range strings.FieldsFunc(got, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if StartsCommand(line) {
			t.Errorf("line %q would be read as a workflow command:\n%s", line, got)
		}
	}
	if want := "error one\n\\::add-mask::secret\n  \\::error::forged\rx\r\\::warning::y\nkept::as is\n"; got != want {
		t.Errorf("NoCommands = %q, want %q", got, want)
	}
	if NoCommands("plain\n") != "plain\n" {
		t.Error("text without :: changed")
	}
}

func TestMarkdownAddsNoMarkup(t *testing.T) {
	for in, want := range map[string]string{
		"[x](https://e.example)": "&#91;x&#93;(https://e.example)",
		"a|b`c<d>&e":             "a&#124;b&#96;c&lt;d&gt;&amp;e",
		"a\n| row |":             `&quot;a\n&#124; row &#124;&quot;`,
		"</summary>":             "&lt;/summary&gt;",
		"web":                    "web",
	} {
		if got := Markdown(in); got != want {
			t.Errorf("Markdown(%q) = %q, want %q", in, got, want)
		}
	}
}
