package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapply/kapply/internal/testcluster"
)

// TestIgnoreRulesEveryOutput: the rules silence the ignored fields in
// every output of diff — the unified diff, --summary, -o markdown, -o
// html, -o events (JSON) — and in the exit status; a real change still
// shows in each, the ignored fields still not.
func TestIgnoreRulesEveryOutput(t *testing.T) {
	testcluster.Require(t, cluster)
	dir, ns := ignoreScenario(t)
	var rules []string
	for _, rule := range ignoreRuleFlags {
		rules = append(rules, "--ignore", rule)
	}
	outputs := [][]string{{}, {"--explain"}, {"--summary"}, {"-o", "markdown"}, {"-o", "html"}, {"-o", "events"}}
	diff := func(output []string, withRules bool) result {
		args := append([]string{"diff", "-f", dir, "-n", ns}, output...)
		if withRules {
			args = append(args, rules...)
		}
		return kapply(t, args...)
	}
	for _, output := range outputs {
		if r := diff(output, false); r.code != 1 {
			t.Errorf("diff %v without rules: exit %d, want 1: %s", output, r.code, r.stderr)
		}
		r := diff(output, true)
		if r.code != 0 || strings.Contains(r.stdout, "busybox:2") {
			t.Errorf("diff %v with every rule: exit %d, want 0 and no ignored value:\n%s%s", output, r.code, r.stdout, r.stderr)
		}
	}
	writeFile(t, dir, "web.yaml", strings.Replace(ignoreWeb, "nginx:1.27", "nginx:1.28", 1))
	for _, output := range outputs {
		r := diff(output, true)
		if r.code != 1 || strings.Contains(r.stdout, "busybox:2") || strings.Contains(r.stdout, "hpa-controller") {
			t.Errorf("diff %v with every rule and a new image: exit %d, want 1 without the ignored fields:\n%s%s", output, r.code, r.stdout, r.stderr)
		}
		if len(output) > 0 && output[0] == "--summary" {
			continue // names the object, not its fields
		}
		if !strings.Contains(r.stdout, "1.28") && !strings.Contains(r.stdout, `"spec.template.spec.containers[0].image"`) {
			t.Errorf("diff %v with every rule and a new image: the image is not shown:\n%s", output, r.stdout)
		}
	}
}

// TestIgnoreRulesHostile: rules nobody would write on purpose — a jq
// expression that fails on some objects (iterating a field a ConfigMap
// lacks), one that selects every path of every object, one of 60,000
// characters, a pointer with an RFC 6901 escape (~1 for "/"; no key of a
// built-in kind may hold the "~" that ~0 escapes: pkg/ignore tests it),
// globs that match nothing — give answers, never a panic nor a lost
// object, in diff, status, plan and apply --respect-ignore.
func TestIgnoreRulesHostile(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	cm := func(v string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c1\n  annotations: {\"example.com/a.b\": \"" + v + "\", keep: \"" + v + "\"}\ndata: {k: " + v + "}\n"
	}
	dir := writeFiles(t, map[string]string{"web.yaml": ignoreWeb, "cm.yaml": cm("one")})
	if r := kapply(t, "apply", "-f", dir, "-n", ns); r.code != 0 {
		t.Fatalf("apply: exit %d: %s", r.code, r.stderr)
	}
	// kubectl edit moves the escaped annotation; the file moves both.
	if _, err := dynClient(t).Resource(configMaps).Namespace(ns).Patch(context.Background(), "c1", types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"example.com/a.b":"edited"}}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "cm.yaml", cm("two"))
	escaped := "kind=ConfigMap,pointer=/metadata/annotations/example.com~1a.b"
	r := kapply(t, "diff", "-f", dir, "-n", ns, "--ignore", escaped)
	if r.code != 1 || strings.Contains(r.stdout, "example.com/a.b") || !strings.Contains(r.stdout, "keep: two") {
		t.Errorf("diff --ignore %s: exit %d, want 1 without the escaped annotation, with the other:\n%s%s", escaped, r.code, r.stdout, r.stderr)
	}
	// A jq expression that fails on the ConfigMap (no containers to
	// iterate) and matches the Deployment; a glob that matches nothing.
	failing := `jq=.spec.template.spec.containers[] | select(.name == "sidecar") | .image`
	r = kapply(t, "diff", "-f", dir, "-n", ns, "--explain", "--ignore", failing, "--ignore", "name=nothing-*,pointer=/data")
	if r.code != 1 || !strings.Contains(r.stdout, "k: two") || !strings.Contains(r.stdout, `--ignore #2 ("name=nothing-*,pointer=/data") matched nothing`) {
		t.Errorf("diff with a jq failing on the ConfigMap and a glob matching nothing: exit %d, want 1, the ConfigMap's change, rule #2 unmatched:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, "--ignore #1") {
		t.Errorf("the jq rule matched the Deployment's sidecar image, reported unmatched:\n%s", r.stdout)
	}
	// Every path of every object, and a 60,000-character expression.
	huge := "jq=" + strings.Repeat(".data.nothing // ", 3500) + ".data.k"
	for _, rule := range []string{"jq=..", huge} {
		label := rule[:min(len(rule), 20)]
		for _, args := range [][]string{
			{"diff", "--explain"}, {"diff", "--server-side", "--force-conflicts"}, {"status"},
			{"plan", "-o", filepath.Join(t.TempDir(), "plan.json")},
		} {
			r := kapply(t, append(args, "-f", dir, "-n", ns, "--ignore", rule)...)
			if r.code > 1 || strings.Contains(r.stderr, "panic") {
				t.Errorf("%v --ignore %s…: exit %d: %s", args, label, r.code, r.stderr)
			}
		}
	}
	r = kapply(t, "diff", "-f", dir, "-n", ns, "--ignore", "jq=..")
	if r.code != 0 || r.stdout != "" {
		t.Errorf("diff --ignore jq=.. (every field): exit %d, want 0 and nothing:\n%s%s", r.code, r.stdout, r.stderr)
	}
	// apply --respect-ignore with the escaped pointer keeps the edited
	// annotation, applies the rest; with jq=.. it changes nothing.
	r = kapply(t, "apply", "-f", dir, "-n", ns, "--respect-ignore", "--ignore", escaped, "--ignore", failing)
	if r.code != 0 {
		t.Fatalf("apply --respect-ignore: exit %d: %s", r.code, r.stderr)
	}
	live, err := dynClient(t).Resource(configMaps).Namespace(ns).Get(context.Background(), "c1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a := live.GetAnnotations(); a["example.com/a.b"] != "edited" || a["keep"] != "two" || live.Object["data"].(map[string]any)["k"] != "two" {
		t.Errorf("after apply --respect-ignore: annotations %v, data %v; want the escaped one edited, the rest the file's", a, live.Object["data"])
	}
	writeFile(t, dir, "cm.yaml", cm("three"))
	r = kapply(t, "apply", "-f", dir, "-n", ns, "--respect-ignore", "--ignore", "jq=..")
	if r.code != 0 || !strings.Contains(r.stdout, "configmap/c1 unchanged") {
		t.Errorf("apply --respect-ignore --ignore jq=..: exit %d, want 0 and unchanged:\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A bad glob is a usage error naming the flag, in every command.
	for _, cmd := range [][]string{{"diff"}, {"status"}, {"plan", "-o", "-"}, {"apply", "--respect-ignore"}} {
		r := kapply(t, append(cmd, "-f", dir, "-n", ns, "--ignore", "name=[,pointer=/data")...)
		if r.code != 2 || !strings.Contains(r.stderr, "--ignore #1") {
			t.Errorf("%v with a bad glob: exit %d, want 2 naming --ignore #1: %s", cmd, r.code, r.stderr)
		}
	}
}

// TestIgnoreMalformedRuleFileInPlan: kapply plan and apply -i refuse a
// malformed rules file as diff does: exit 2 naming the file and line,
// nothing planned.
func TestIgnoreMalformedRuleFileInPlan(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"web.yaml": ignoreWeb, "rules.yaml": "apiVersion: kapply.dev/v1alpha1\nkind: IgnoreRules\nrules:\n- kind: Deployment\n  jsonPointers: [spec/replicas]\n"})
	rules, web := filepath.Join(dir, "rules.yaml"), filepath.Join(dir, "web.yaml")
	planFile := filepath.Join(t.TempDir(), "plan.json")
	for _, args := range [][]string{
		{"plan", "-o", planFile},
		{"apply", "-i", "--yes", "--respect-ignore"},
	} {
		r := kapply(t, append(args, "-f", web, "-n", ns, "--ignore-file", rules)...)
		if r.code != 2 || !strings.Contains(r.stderr, rules+":5:") {
			t.Errorf("%v with a pointer lacking its /: exit %d, want 2 naming %s:5: %s", args, r.code, rules, r.stderr)
		}
	}
	if _, err := os.Stat(planFile); !os.IsNotExist(err) {
		t.Errorf("a plan was written despite the malformed rules (%v)", err)
	}
	if r := kapply(t, "apply", "-i", "--yes", "-f", web, "-n", ns, "--ignore", "pointer=/spec/replicas"); r.code != 2 || !strings.Contains(r.stderr, "--respect-ignore") {
		t.Errorf("apply -i with rules and no --respect-ignore: exit %d, want 2 naming --respect-ignore: %s", r.code, r.stderr)
	}
	if r := kapply(t, "apply", "--plan", planFile, "-f", web, "-n", ns, "--ignore", "pointer=/spec/replicas"); r.code == 0 || !strings.Contains(r.stderr, "--ignore cannot be used with --plan") {
		t.Errorf("apply --plan with rules: exit %d, want refused naming --ignore: %s", r.code, r.stderr)
	}
}
