package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A Role's name is checked by the server only for "/", "%", "." and "..":
// one holding an escape sequence and a CR is created. Printed raw in the
// --confirm table, it moves the cursor up and erases the row above it —
// the row of another object's patch, which would still run.
const erasingRoleName = "eraser\x1b[1A\x1b[2K\rrole"

// hostileRoleYAML is a Role named name, its name spelt with YAML's escapes.
func hostileRoleYAML(name string) string {
	return "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: " + strconv.Quote(name) + "\nrules: []\n"
}

// rawControls are what must never reach output from a name.
const rawControls = "\r\x1b\u202e\u2066\u2028"

// TestConfirmTableQuotesAHostileName: the --confirm table shows a Role
// named with ESC [1A ESC [2K CR quoted, beside the row of the patch it
// would erase; "n" exits 1 with nothing written; "y" prints the created
// line with the name quoted too.
func TestConfirmTableQuotesAHostileName(t *testing.T) {
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"victim.yaml": configMapYAML("victim", "mode", "fast")})
	mustRunKapply(t, "apply", "-f", dir, "-n", ns)
	writeFile(t, dir, "victim.yaml", configMapYAML("victim", "mode", "slow"))
	writeFile(t, dir, "role.yaml", hostileRoleYAML(erasingRoleName))

	r := kapplyOnTerminal(t, "n", nil, "apply", "--confirm", "-f", dir, "-n", ns)
	table := r.stdout[:max(0, strings.Index(r.stdout, prompt))]
	if strings.ContainsAny(table, rawControls) {
		t.Errorf("a control character from a name reached the table:\n%q", table)
	}
	quoted := strconv.Quote(erasingRoleName)
	for _, want := range []string{quoted, "victim", "data.mode"} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %s:\n%s", want, table)
		}
	}
	if r.code != 1 || !strings.Contains(r.stderr, "apply declined: nothing written") {
		t.Errorf("answered n: exit %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
	}
	if got := configMapData(t, ns, "victim")["mode"]; got != "fast" {
		t.Errorf("answered n, but victim's mode is %v", got)
	}

	r = kapplyOnTerminal(t, "y", nil, "apply", "--confirm", "-f", dir, "-n", ns)
	if r.code != 0 || strings.ContainsAny(r.stdout+r.stderr, rawControls) ||
		!strings.Contains(r.stdout, "role.rbac.authorization.k8s.io/"+quoted+" created") {
		t.Errorf("answered y: exit %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
	}
	r = kapply(t, "delete", "-f", filepath.Join(dir, "role.yaml"), "-n", ns)
	if r.code != 0 || strings.ContainsAny(r.stdout+r.stderr, rawControls) || !strings.Contains(r.stdout, `role.rbac.authorization.k8s.io "eraser\x1b[1A`) {
		t.Errorf("delete: exit %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
	}
}

// refusedNames are names the server refuses, printed by kapply in the
// error line that names the object.
var refusedNames = []string{
	"cr\rerased", "esc\x1b[2Kline", "nl\n::error::forged", "bidi\u202eevil",
	"%0A::add-mask::pct", "::add-mask::plain", "link[x](https://e.example)", "row\n| forged | 1 |",
}

func refusedNamesDir(t *testing.T) string {
	files := map[string]string{}
	for i, name := range refusedNames {
		files["cm"+strconv.Itoa(i)+".yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + strconv.Quote(name) + "\ndata: {k: v}\n"
	}
	return writeFiles(t, files)
}

// noForgedLines fails the test for a raw control character from a name in
// out, or for a line (where a terminal or the GitHub runner ends one)
// that the runner would read as a workflow command other than own, the
// commands kapply writes itself.
func noForgedLines(t *testing.T, what, out string, own func(line string) bool) {
	t.Helper()
	if strings.ContainsAny(out, rawControls) {
		t.Errorf("%s: a control character from a name reached the output:\n%q", what, out)
	}
	for _, line := range strings.FieldsFunc(out, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if strings.HasPrefix(strings.TrimSpace(line), "::") && (own == nil || !own(line)) {
			t.Errorf("%s: line %q would be read as a workflow command", what, line)
		}
	}
}

// TestErrorLinesQuoteHostileNames: apply, diff and delete name each object
// the server refuses in an error line, its name quoted: no line is erased
// or forged, none is a workflow command.
func TestErrorLinesQuoteHostileNames(t *testing.T) {
	ns := cluster.Namespace(t)
	dir := refusedNamesDir(t)
	for _, args := range [][]string{{"apply"}, {"diff"}, {"diff", "--server-side"}, {"delete"}} {
		r := kapply(t, append(args, "-f", dir, "-n", ns)...)
		what := strings.Join(args, " ")
		if r.code == 0 || !strings.Contains(r.stderr, `"nl\n::error::forged"`) {
			t.Errorf("%s: exit %d, the refused name not quoted:\nstdout %q\nstderr %q", what, r.code, r.stdout, r.stderr)
		}
		noForgedLines(t, what+" stdout", r.stdout, nil)
		noForgedLines(t, what+" stderr", r.stderr, nil)
	}
}

// TestDiffMarkdownGitHubOfHostileNames: diff -o markdown --github writes
// one ::error command per refused object and nothing else the runner
// reads as a command, on stdout or stderr; the job summary holds no
// table row or link a name made.
func TestDiffMarkdownGitHubOfHostileNames(t *testing.T) {
	ns := cluster.Namespace(t)
	dir := refusedNamesDir(t)
	summary := filepath.Join(t.TempDir(), "summary.md")
	t.Setenv("GITHUB_STEP_SUMMARY", summary)
	r := kapply(t, "diff", "-o", "markdown", "--github", "-f", dir, "-n", ns)
	if r.code < 2 {
		t.Errorf("exit %d, want an error exit\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
	}
	noForgedLines(t, "stdout", r.stdout, nil)
	commands := 0
	noForgedLines(t, "stderr", r.stderr, func(line string) bool {
		if strings.HasPrefix(line, "::error file=") {
			commands++
			return true
		}
		return false
	})
	if commands != len(refusedNames) {
		t.Errorf("%d ::error commands for %d refused objects:\n%s", commands, len(refusedNames), r.stderr)
	}
	written, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	noForgedLines(t, "summary", string(written), nil)
	fence := ""
	for _, line := range strings.Split(string(written), "\n") {
		switch {
		case fence != "" && line == fence:
			fence = ""
		case fence != "": // code: shown as it is
		case strings.HasPrefix(line, "```"):
			fence = strings.TrimRight(line, "abcdefghijklmnopqrstuvwxyz")
		case strings.HasPrefix(line, "|") && !strings.HasPrefix(line, "| operation") && !strings.HasPrefix(line, "| --- ") && !summaryCountRow(line):
			t.Errorf("a table row a name made: %q", line)
		case strings.ContainsAny(line, "[]`") || strings.Count(line, "<") > 3:
			t.Errorf("markup a name made: %q", line)
		}
	}
}

// summaryCountRow reports a row of the report's table of counts.
func summaryCountRow(line string) bool {
	fields := strings.Split(strings.Trim(line, "| "), " | ")
	_, err := strconv.Atoi(strings.TrimSpace(fields[len(fields)-1]))
	return len(fields) == 2 && err == nil && !strings.Contains(fields[0], " ")
}
