package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kapply/kapply/internal/testcluster"
)

// The report scenario: ConfigMaps settings (updated, one value a script,
// another full of backticks), new (created) and old (pruned); the Secret
// creds (a new password); the Service api (unchanged); and in bad.yaml,
// on line 4 after a comment and a separator, a Deployment the server
// refuses.
const (
	reportSettings = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {page: plain, ticks: plain}\n"
	reportOld      = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: old}\ndata: {k: v}\n"
	reportCreds    = "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\nstringData: {password: report-first-pass}\n"
	reportAPI      = "apiVersion: v1\nkind: Service\nmetadata: {name: api}\nspec: {selector: {app: api}, ports: [{port: 80}]}\n"
	reportBad      = "# a Deployment the server refuses\n---\n\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: bad}\n" +
		"spec: {replicas: -1, selector: {matchLabels: {app: bad}}, template: {metadata: {labels: {app: bad}}, spec: {containers: [{name: c, image: nginx}]}}}\n"
	reportScript = "<script>document.title='pwned'</script>"
	reportTicks  = "a ``` b ```````` c"
)

// reportScenario applies the first state with an ApplySet, then changes
// the files; it returns the directory, the namespace and the diff's
// arguments.
func reportScenario(t *testing.T, withBad bool) (dir, ns string, args []string) {
	t.Helper()
	ns = cluster.Namespace(t)
	dir = writeFiles(t, map[string]string{"settings.yaml": reportSettings, "old.yaml": reportOld, "creds.yaml": reportCreds, "api.yaml": reportAPI})
	if r := kapply(t, "apply", "-f", dir, "-n", ns, "--prune", "--applyset=report"); r.code != 0 {
		t.Fatalf("apply: exit %d: %s", r.code, r.stderr)
	}
	writeFile(t, dir, "settings.yaml", strings.NewReplacer("page: plain", "page: \""+reportScript+"\"", "ticks: plain", "ticks: '"+reportTicks+"'").Replace(reportSettings))
	writeFile(t, dir, "creds.yaml", strings.Replace(reportCreds, "report-first-pass", "report-second-pass", 1))
	writeFile(t, dir, "new.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: new}\ndata: {k: v}\n")
	if err := os.Remove(filepath.Join(dir, "old.yaml")); err != nil {
		t.Fatal(err)
	}
	if withBad {
		writeFile(t, dir, "bad.yaml", reportBad)
	}
	return dir, ns, []string{"diff", "-f", dir, "-n", ns, "--prune", "--applyset=report"}
}

// noSecretIn fails the test when text holds a value of the Secret.
func noSecretIn(t *testing.T, what, text string) {
	t.Helper()
	for _, v := range []string{"report-first-pass", "report-second-pass", "cmVwb3J0LWZpcnN0LXBhc3M", "cmVwb3J0LXNlY29uZC1wYXNz"} {
		if strings.Contains(text, v) {
			t.Errorf("%s holds the Secret value %q", what, v)
		}
	}
}

func TestDiffMarkdownGithubOnTheServer(t *testing.T) {
	testcluster.Require(t, cluster)
	dir, ns, args := reportScenario(t, true)
	summary := filepath.Join(t.TempDir(), "step-summary.md")
	if err := os.WriteFile(summary, []byte("earlier step\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(githubStepSummary, summary)
	r := kapply(t, append(args, "-o", "markdown", "--github")...)
	if r.code != exitError {
		t.Errorf("exit %d, want %d (an object failed): %s", r.code, exitError, r.stderr)
	}
	// A failed object stops pruning, which fails too: nothing is pruned.
	for _, want := range []string{"| create | 1 |", "| update | 2 |", "| unchanged | 1 |", "| prune | 0 |", "| failed | 2 |",
		"<details><summary>update ConfigMap " + ns + "/settings</summary>", "<details><summary>create ConfigMap " + ns + "/new</summary>",
		"<details><summary>update Secret " + ns + "/creds</summary>", "<details><summary>failed (no object)</summary>",
		"<details><summary>failed Deployment " + ns + "/bad</summary>", "`````````diff\n", "*** (after)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("markdown lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "Service "+ns+"/api") || !strings.HasPrefix(r.stdout, "### kapply diff\n") {
		t.Errorf("markdown does not start with the summary, or shows the unchanged Service:\n%s", r.stdout)
	}
	noSecretIn(t, "markdown", r.stdout+r.stderr)
	written, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	if string(written) != "earlier step\n"+r.stdout {
		t.Errorf("$GITHUB_STEP_SUMMARY does not end with the report:\n%s", written)
	}
	bad := filepath.Join(dir, "bad.yaml")
	command := regexp.MustCompile(`(?m)^::error file=([^,:]*),line=(\d+)::Deployment ` + ns + `/bad: (.*)$`).FindStringSubmatch(r.stderr)
	if command == nil || command[1] != bad || command[2] != "4" || !strings.Contains(command[3], "replicas") {
		t.Errorf("no ::error command for bad.yaml line 4 on stderr (%q):\n%s", command, r.stderr)
	}
	if strings.Contains(r.stdout, "::error") {
		t.Error("workflow commands in the markdown on stdout")
	}
}

func TestDiffMarkdownCutToMaxBytesOnTheServer(t *testing.T) {
	testcluster.Require(t, cluster)
	_, ns, args := reportScenario(t, false)
	r := kapply(t, append(args, "-o", "markdown", "--max-bytes", "1024")...)
	if r.code != exitDifferences {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if len(r.stdout) > 1024 {
		t.Errorf("%d bytes, over --max-bytes 1024", len(r.stdout))
	}
	// Four objects differ: those not shown are counted and named.
	cut := regexp.MustCompile(`\*\*Cut to fit 1024 bytes: (\d+) objects? not shown:\*\* (.*)\.\n$`).FindStringSubmatch(r.stdout)
	if cut == nil {
		t.Fatalf("no last line naming what was cut:\n%s", r.stdout)
	}
	if n, _ := strconv.Atoi(cut[1]); n+strings.Count(r.stdout, "<details>") != 4 || !strings.Contains(cut[2], " "+ns+"/") {
		t.Errorf("%s cut + %d shown, want 4, the first cut named: %q", cut[1], strings.Count(r.stdout, "<details>"), cut[0])
	}
	for _, bad := range [][]string{{"-o", "yaml"}, {"-o", "markdown", "--max-bytes", "10"}, {"--github"}, {"-o", "html", "--summary"}} {
		if r := kapply(t, append(args, bad...)...); r.code != exitError || !strings.Contains(r.stderr, "error:") {
			t.Errorf("%v: exit %d, want %d with an error: %s", bad, r.code, exitError, r.stderr)
		}
	}
}

// TestDiffHTMLReportOnTheServer checks the report as text: every object,
// the script value escaped, the Secret masked, nothing from the network.
func TestDiffHTMLReportOnTheServer(t *testing.T) {
	testcluster.Require(t, cluster)
	_, ns, args := reportScenario(t, false)
	r := kapply(t, append(args, "-o", "html")...)
	if r.code != exitDifferences {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	html := r.stdout
	noSecretIn(t, "the HTML report", html)
	for _, want := range []string{"<!DOCTYPE html>", `data-op="update" data-kind="ConfigMap"`, `data-op="create" data-kind="ConfigMap"`,
		`data-op="prune" data-kind="ConfigMap"`, `data-op="update" data-kind="Secret"`, `data-op="unchanged" data-kind="Service"`,
		"&lt;script&gt;document.title=", "settings", ns} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Contains(html, reportScript) || strings.Count(html, "<script") != 1 || regexp.MustCompile(`(src|href)=`).MatchString(html) {
		t.Errorf("the report holds the raw script value, another script, or a link out")
	}
}
