package diff

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/kapply/kapply/pkg/shown"
)

// hostileNames are object names a file can hold: each would act on a
// terminal, a CI log or a markdown report if printed raw.
var hostileNames = []string{
	"cr\rerased",
	"esc\x1b[2Kline",
	"nl\n::error::forged",
	"bidi\u202eevil",
	"%0A::add-mask::pct",
	"::error::plain",
	"link[x](https://e.example)",
	"row\n| forged | 1 |",
	"end</summary><b>bold",
	"bidi-isolate\u2066x",
	"ls\u2028x",
}

// hostileComparisons are a changed ConfigMap per hostile name, in a
// namespace and from a file as hostile, named as the callers name them
// (apply.ObjectRef quotes; here Ref is left raw to check it is quoted).
func hostileComparisons(t *testing.T) []Comparison {
	var out []Comparison
	for _, name := range hostileNames {
		c := configMapChange(t, "ns\x1b]0;title\a", name, "k", "1", "2")
		c.Object.Source = "dir/\x1b[31mred\n::warning::f.yaml"
		out = append(out, c)
	}
	return out
}

func hostileFailures() []Failure {
	var out []Failure
	for _, name := range hostileNames {
		out = append(out, Failure{Identity: Identity{Kind: "Config\rMap", Namespace: "ns\n::add-mask::x", Name: name},
			File: "f\r::error::x.yaml", Line: 3, Message: "refused:\n::add-mask::message line\r::error::cr line"})
	}
	return out
}

// summaryRow is a row of the report's table of counts.
var summaryRow = regexp.MustCompile(`^\| [a-z]+ \| \d+ \|$`)

// rawControls are what must never reach output from a name.
const rawControls = "\r\x1b\u202e\u2066\u2028\a"

// isHeader reports a line of a unified diff that names the object (the
// YAML below it shows values as kubectl's diff does: YAML's own escapes).
func isHeader(line string) bool {
	for _, p := range []string{"diff -u ", "# ", "--- ", "+++ "} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

// lines splits text where a terminal or the GitHub runner ends a line.
func lines(text string) []string {
	return strings.FieldsFunc(text, func(r rune) bool { return r == '\n' || r == '\r' })
}

func TestMarkdownOfHostileNamesAddsNoMarkupNorCommands(t *testing.T) {
	for _, budget := range []int{0, MinMarkdownBytes} {
		out, err := Markdown(hostileComparisons(t), hostileFailures(), budget)
		if err != nil {
			t.Fatal(err)
		}
		inFence := ""
		for _, line := range strings.Split(out, "\n") {
			if shown.StartsCommand(line) || strings.Contains(line, "\r") && shown.StartsCommand(line[strings.LastIndex(line, "\r")+1:]) {
				t.Errorf("budget %d: line %q would be read as a workflow command", budget, line)
			}
			if (inFence == "" || isHeader(line)) && strings.ContainsAny(line, rawControls) {
				t.Errorf("budget %d: a control character from a name reached the report: %q", budget, line)
			}
			switch {
			case inFence != "" && line == inFence:
				inFence = ""
			case inFence != "":
			case strings.HasPrefix(line, "```"):
				inFence = strings.TrimRight(line, "abcdefghijklmnopqrstuvwxyz")
			case strings.HasPrefix(line, "|"):
				if !strings.HasPrefix(line, "| operation |") && !strings.HasPrefix(line, "| --- |") && !summaryRow.MatchString(line) {
					t.Errorf("budget %d: a table row no summary makes: %q", budget, line)
				}
			case strings.HasPrefix(line, "<details>"):
				if strings.Count(line, "<") != 3 || !strings.HasSuffix(line, "</summary>") {
					t.Errorf("budget %d: a summary holding markup: %q", budget, line)
				}
			case strings.HasPrefix(line, "**Cut to fit"):
				if strings.ContainsAny(line, "[]<>|`") {
					t.Errorf("budget %d: the cut line holds markup: %q", budget, line)
				}
			}
		}
		if budget == 0 && !strings.Contains(out, `&quot;nl\n::error::forged&quot;`) {
			t.Errorf("the name with a newline is not shown quoted:\n%s", out)
		}
	}
}

func TestGitHubErrorsOfHostileNamesAreOneCommandEach(t *testing.T) {
	failures := hostileFailures()
	out := GitHubErrors(failures)
	got := lines(out)
	if len(got) != len(failures) {
		t.Fatalf("%d lines for %d failures:\n%s", len(got), len(failures), out)
	}
	for _, line := range got {
		if strings.ContainsAny(line, rawControls) {
			t.Errorf("a control character reached the command: %q", line)
		}
		props, _, ok := strings.Cut(strings.TrimPrefix(line, "::error "), "::")
		if !strings.HasPrefix(line, "::error ") || !ok || props != `file="f\r%3A%3Aerror%3A%3Ax.yaml",line=3` {
			t.Errorf("not one ::error command with its two properties: %q", line)
		}
	}
	if want := `Config\rMap`; !strings.Contains(got[0], want) {
		t.Errorf("the kind is not shown quoted (%s): %q", want, got[0])
	}
}

func TestUnifiedDiffOfHostileNamesQuotesThem(t *testing.T) {
	comparisons := hostileComparisons(t)
	// A change next to the name, so that the lines of a name holding a
	// newline are shown.
	live := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "nl\n::error::forged", "labels": map[string]any{"a": "1"}}}
	after := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "nl\n::error::forged", "labels": map[string]any{"a": "2"}}}
	c, err := Compare(Object{Name: "v1.ConfigMap..nl\n::error::forged", Ref: `configmap/"nl\n::error::forged"`, Live: live, After: after}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	comparisons = append(comparisons, c)
	for _, summary := range []bool{false, true} {
		var b bytes.Buffer
		if err := (Printer{Summary: summary}).Print(&b, comparisons); err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(b.String(), "\n") {
			if (summary || isHeader(line)) && strings.ContainsAny(line, rawControls) {
				t.Errorf("summary %v: a control character from a name reached the diff: %q", summary, line)
			}
			if shown.StartsCommand(line) || strings.Contains(line, "\r") && shown.StartsCommand(line[strings.LastIndex(line, "\r")+1:]) {
				t.Errorf("summary %v: line %q would be read as a workflow command", summary, line)
			}
		}
		if !strings.Contains(b.String(), `nl\n::error::forged`) {
			t.Errorf("summary %v: the name is not quoted:\n%s", summary, b.String())
		}
	}
}
