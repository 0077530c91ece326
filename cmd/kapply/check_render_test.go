package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kapply/kapply/internal/testcluster"
	"github.com/kapply/kapply/pkg/plan"
)

// checkRenderFiles are TestCheckFlag's two ConfigMaps in one file, bad
// second (its document starts on line 6, after the separator), so that a verdict's line is the
// object's own.
const checkRenderFiles = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: good, labels: {team: a}}\ndata: {a: '1', b: '2', c: '3'}\n" +
	"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad}\ndata: {a: '1'}\n"

// TestCheckRendered: --check's verdicts are in every output that shows
// the objects — the plan table's CHECK column, diff --explain's "# check:"
// lines, the markdown report (and an ::error command on the object's file
// and line under --github, a ::warning for a warned one) and -o events'
// "verdicts" member — and each still exits 3.
func TestCheckRendered(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	withCheckPolicies(t, ns)
	dir := writeFiles(t, map[string]string{"cms.yaml": checkRenderFiles})
	file := filepath.Join(dir, "cms.yaml")
	team := fmt.Sprintf("ValidatingAdmissionPolicy %s-team (binding %s-team): a ConfigMap needs a team label", ns, ns)
	size := fmt.Sprintf("ValidatingAdmissionPolicy %s-size (binding %s-size): too many keys", ns, ns)

	r := kapply(t, "plan", "--check", "-f", dir, "-n", ns, "-o", filepath.Join(t.TempDir(), "plan.json"))
	if r.code != 3 || !strings.Contains(r.stdout, "CHECK") ||
		!tableRowHas(r.stdout, "bad", "denied ("+ns+"-team)") || !tableRowHas(r.stdout, "good", "warned ("+ns+"-size)") {
		t.Errorf("plan --check: exit %d, want 3 and a CHECK column with each verdict:\n%s%s", r.code, r.stdout, r.stderr)
	}

	r = kapply(t, "diff", "--check", "--local", "--explain", "-f", dir, "-n", ns)
	for _, want := range []string{"# check: denied: " + team, "# check: warned: " + size} {
		if r.code != 3 || !strings.Contains(r.stdout, want) {
			t.Errorf("diff --check --explain: exit %d, want 3 with %q:\n%s%s", r.code, want, r.stdout, r.stderr)
		}
	}

	r = kapply(t, "diff", "--check", "--local", "-o", "markdown", "--github", "-f", dir, "-n", ns)
	wantErr := fmt.Sprintf("::error file=%s,line=6::ConfigMap %s/bad: denied by --check: %s", file, ns, team)
	wantWarn := fmt.Sprintf("::warning file=%s,line=1::ConfigMap %s/good: Warning: %s", file, ns, size)
	if r.code != 3 || !strings.Contains(r.stdout, "(denied by --check)") || !strings.Contains(r.stdout, "# check: denied: "+team) ||
		!strings.Contains(r.stderr, wantErr) || !strings.Contains(r.stderr, wantWarn) {
		t.Errorf("diff --check -o markdown --github: exit %d, want 3, the verdicts in the report and %q, %q on stderr:\n%s%s", r.code, wantErr, wantWarn, r.stdout, r.stderr)
	}

	r = kapply(t, "diff", "--check", "--local", "-o", "events", "-f", dir, "-n", ns)
	got := map[string][]plan.Verdict{}
	for _, ev := range readEvents(t, r.stdout) {
		if ev.Type == diffType && ev.Object != nil {
			got[ev.Object.Name] = ev.Verdicts
		}
	}
	for name, want := range map[string]plan.Verdict{
		"bad":  {Outcome: plan.Denied, Policy: ns + "-team", Binding: ns + "-team", Message: "a ConfigMap needs a team label"},
		"good": {Outcome: plan.Warned, Policy: ns + "-size", Binding: ns + "-size", Message: "too many keys"},
	} {
		if len(got[name]) != 1 || got[name][0] != want {
			t.Errorf("diff --check -o events: %s has verdicts %+v, want [%+v] (exit %d):\n%s", name, got[name], want, r.code, r.stdout)
		}
	}
	if r.code != 3 {
		t.Errorf("diff --check -o events: exit %d, want 3:\n%s", r.code, r.stderr)
	}
}

// TestCheckDiffServerDryRun: diff --check without --local sends its own
// server dry run, which the server's policies deny first. The denial
// --check predicts is then the verdict (exit 3, as with --local), not the
// object's error (exit 2), and the object's diff is shown.
func TestCheckDiffServerDryRun(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	withCheckPolicies(t, ns)
	dir := writeFiles(t, map[string]string{"cms.yaml": checkRenderFiles})
	denial := "denied by --check: ConfigMap/bad -n " + ns + ": ValidatingAdmissionPolicy " + ns + "-team (binding " + ns + "-team): a ConfigMap needs a team label"
	r := kapply(t, "diff", "--check", "-f", dir, "-n", ns)
	if r.code != 3 || !strings.Contains(r.stderr, denial) || strings.Contains(r.stderr, "server dry run") || !strings.Contains(r.stdout, "v1.ConfigMap."+ns+".bad") {
		t.Errorf("diff --check (server dry run): exit %d, want 3 with %q, no error, and bad's diff:\n%s%s", r.code, denial, r.stdout, r.stderr)
	}
}

// tableRowHas reports whether the table row of the object named name
// holds want.
func tableRowHas(table, name, want string) bool {
	for _, line := range strings.Split(table, "\n") {
		if fields := strings.Fields(line); len(fields) > 2 && fields[2] == name && strings.Contains(line, want) {
			return true
		}
	}
	return false
}
