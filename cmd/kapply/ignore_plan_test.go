package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapply/kapply/internal/testcluster"
	"github.com/kapply/kapply/pkg/fieldpath"
)

// liveWeb reads ignoreScenario's Deployment as "team replicas sidecar web"
// (the team label, the replicas, both images).
func liveWeb(t *testing.T, ns string) string {
	t.Helper()
	live, err := dynClient(t).Resource(deployments).Namespace(ns).Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spec := live.Object["spec"].(map[string]any)
	images := map[string]any{}
	for _, c := range spec["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any) {
		images[c.(map[string]any)["name"].(string)] = c.(map[string]any)["image"]
	}
	return fmt.Sprint(live.GetLabels()["team"], " ", spec["replicas"], " ", images["sidecar"], " ", images["web"])
}

// planChangedPaths are the paths of a saved plan's changes, as text.
func planChangedPaths(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Items []struct {
			Action  string `json:"action"`
			Changes []struct {
				Path   string `json:"path"`
				Reason string `json:"reason"`
			} `json:"changes"`
		} `json:"items"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, it := range doc.Items {
		for _, c := range it.Changes {
			if c.Reason == "kept-unmanaged" {
				t.Errorf("a saved plan holds a kept field: %s", c.Path)
			}
			path, err := fieldpath.ParseText(c.Path)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, path.String())
		}
	}
	return "\n" + strings.Join(out, "\n") + "\n"
}

// TestIgnoreRulesPlan: kapply plan with a pointer, a jq or a manager rule
// leaves the ignored field out of the plan's changes and table, and apply
// --plan of that plan leaves it as it is live — also when its writer moved
// it again between the plan and the apply — while the file's other
// changes are applied.
func TestIgnoreRulesPlan(t *testing.T) {
	testcluster.Require(t, cluster)
	// Each ignored field moved again by its writer after the plan.
	again := map[string]struct {
		manager, subresource, body string
		after                      string
	}{
		"pointer": {"kubectl-edit", "", `{"metadata":{"labels":{"team":"y"}}}`, "y 2 busybox:1 nginx:1.28"},
		"jq":      {"mesh-injector", "", `{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"busybox:3"}]}}}}`, "a 2 busybox:3 nginx:1.28"},
		"manager": {"hpa-controller", "scale", `{"spec":{"replicas":6}}`, "a 6 busybox:1 nginx:1.28"},
	}
	for name, rule := range ignoreRuleFlags {
		t.Run(name, func(t *testing.T) {
			dir, ns := ignoreScenario(t)
			writeFile(t, dir, "web.yaml", strings.Replace(ignoreWeb, "nginx:1.27", "nginx:1.28", 1))
			planFile := filepath.Join(t.TempDir(), "plan.json")
			r := kapply(t, "plan", "-f", dir, "-n", ns, "--ignore", rule, "-o", planFile)
			if r.code != 0 {
				t.Fatalf("plan --ignore %s: exit %d: %s", rule, r.code, r.stderr)
			}
			changed := planChangedPaths(t, planFile)
			if !strings.Contains(changed, "\nspec.template.spec.containers[name=web].image\n") {
				t.Errorf("plan --ignore %s: the new image is not among the changes:\n%s", rule, changed)
			}
			for other, text := range ignoredFieldText {
				if inPlan := strings.Contains(changed, text.status+"\n"); inPlan == (other == name) {
					t.Errorf("plan --ignore %s: a change of %s in the plan: %t, want %t; changes:\n%s", rule, text.status, inPlan, other != name, changed)
				}
			}
			if strings.Contains(r.stdout, ignoredFieldText[name].status) {
				t.Errorf("plan --ignore %s: the table names the ignored field:\n%s", rule, r.stdout)
			}
			c := again[name]
			var sub []string
			if c.subresource != "" {
				sub = []string{c.subresource}
			}
			pt := types.MergePatchType
			if name == "jq" {
				pt = types.StrategicMergePatchType
			}
			if _, err := dynClient(t).Resource(deployments).Namespace(ns).Patch(context.Background(), "web", pt, []byte(c.body), metav1.PatchOptions{FieldManager: c.manager}, sub...); err != nil {
				t.Fatal(err)
			}
			r = kapply(t, "apply", "--plan", planFile, "-f", dir, "-n", ns)
			if r.code != 0 {
				t.Fatalf("apply --plan after the ignored field moved: exit %d, want 0 (tolerated): %s%s", r.code, r.stdout, r.stderr)
			}
			if got := liveWeb(t, ns); got != c.after {
				t.Errorf("after apply --plan: team, replicas, sidecar, web = %s; want %s (the ignored field as live, the rest the file's)", got, c.after)
			}
		})
	}
}

// TestExplainNoiseServerSide: under diff --server-side, --explain classes
// each field the server's dry run changes — an autoscaler's replicas
// (other writer), a label a mutating admission policy adds and a port's
// defaulted protocol ("server": an apply's managedFields own neither, so
// they cannot be told apart), a label the file sets that the policy
// overrides (server: admission), a label the file no longer sets (removed
// from file) — and --suggest-ignore's rules silence the noise while a
// real change still exits 1.
func TestExplainNoiseServerSide(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"web.yaml": ignoreWeb})
	if r := kapply(t, "apply", "--server-side", "-f", dir, "-n", ns); r.code != 0 {
		t.Fatalf("apply --server-side: %s", r.stderr)
	}
	if _, err := dynClient(t).Resource(deployments).Namespace(ns).Patch(context.Background(), "web", types.MergePatchType,
		[]byte(`{"spec":{"replicas":4}}`), metav1.PatchOptions{FieldManager: "hpa-controller"}, "scale"); err != nil {
		t.Fatal(err)
	}
	injectLabelPolicy(t, ns)
	diff := func(extra ...string) result {
		return kapply(t, append([]string{"diff", "-f", dir, "-n", ns, "--server-side", "--force-conflicts"}, extra...)...)
	}
	// The file unchanged: all the difference is noise.
	r := diff("--explain")
	for _, want := range []string{"#   metadata.labels.injected: server\n", "#   spec.replicas: other writer: hpa-controller\n"} {
		if r.code != 1 || !strings.Contains(r.stdout, want) {
			t.Errorf("diff --server-side --explain: exit %d, want 1 and %q:\n%s%s", r.code, want, r.stdout, r.stderr)
		}
	}
	if strings.Contains(r.stdout, "injected: (none) -> yes  (set by file)") {
		t.Errorf("diff --server-side --explain calls the injected label set by file:\n%s", r.stdout)
	}
	r = diff("--suggest-ignore")
	if r.code != 1 || !strings.HasPrefix(r.stdout, "apiVersion: kapply.dev/v1alpha1\nkind: IgnoreRules\n") {
		t.Fatalf("diff --server-side --suggest-ignore: exit %d, want 1 and a rules file:\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"- /metadata/labels/injected", "- hpa-controller"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("suggested rules lack %q:\n%s", want, r.stdout)
		}
	}
	rules := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(rules, []byte(r.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := diff("--ignore-file", rules); r.code != 0 || r.stdout != "" {
		t.Errorf("diff --server-side with the suggested rules: exit %d, want 0 and nothing:\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Real changes: a new port (its protocol defaulted), the team label dropped.
	changed := strings.Replace(ignoreWeb, `image: "nginx:1.27"}`, `image: "nginx:1.27", ports: [{containerPort: 8080}]}`, 1)
	writeFile(t, dir, "web.yaml", strings.Replace(changed, ", team: a", "", 1))
	r = diff("--ignore-file", rules, "--explain")
	if r.code != 1 {
		t.Errorf("diff --server-side with the rules and real changes: exit %d, want 1:\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"ports[containerPort=8080].protocol: server\n", "metadata.labels.team: \"a\" -> (none)  (removed from file"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("diff --server-side --explain lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "replicas") || strings.Contains(r.stdout, "injected") {
		t.Errorf("diff --server-side with the rules shows an ignored field:\n%s", r.stdout)
	}
	// A label the file sets and the policy overrides: admission.
	writeFile(t, dir, "web.yaml", strings.Replace(ignoreWeb, "team: a}", "team: a, injected: \"no\"}", 1))
	r = diff("--explain")
	if r.code != 1 || !strings.Contains(r.stdout, "#   metadata.labels.injected: server: admission\n") {
		t.Errorf("diff --server-side --explain of a label the policy overrides: exit %d, want 1 and server: admission:\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestIgnoreRulesPlanServerSide: a server-side plan with a manager rule
// carries the autoscaler's replicas at their live value; apply --plan
// applies it while they stay so, and refuses it, naming spec.replicas,
// once the autoscaler moved them — rather than write the old count back.
func TestIgnoreRulesPlanServerSide(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"web.yaml": ignoreWeb})
	if r := kapply(t, "apply", "--server-side", "-f", dir, "-n", ns); r.code != 0 {
		t.Fatalf("apply --server-side: %s", r.stderr)
	}
	scale := func(n int) {
		t.Helper()
		body := fmt.Sprintf(`{"spec":{"replicas":%d}}`, n)
		if _, err := dynClient(t).Resource(deployments).Namespace(ns).Patch(context.Background(), "web", types.MergePatchType,
			[]byte(body), metav1.PatchOptions{FieldManager: "hpa-controller"}, "scale"); err != nil {
			t.Fatal(err)
		}
	}
	scale(4)
	writeFile(t, dir, "web.yaml", strings.Replace(ignoreWeb, "nginx:1.27", "nginx:1.28", 1))
	planFile := filepath.Join(t.TempDir(), "plan.json")
	for _, planned := range [][]string{
		{"diff", "--server-side", "--save-plan", planFile},
		{"plan", "--server-side", "-o", planFile},
	} {
		r := kapply(t, append(planned, "-f", dir, "-n", ns, "--ignore", "manager=hpa-controller")...)
		if r.code > 1 {
			t.Fatalf("%s: exit %d: %s", planned[0], r.code, r.stderr)
		}
		if changed := planChangedPaths(t, planFile); strings.Contains(changed, "\nspec.replicas\n") {
			t.Errorf("%s --server-side --ignore manager=hpa-controller: replicas among the plan's changes:\n%s", planned[0], changed)
		}
	}
	// The diff's plan: replicas moved since, so it is refused.
	r := kapply(t, "diff", "--server-side", "--save-plan", planFile, "-f", dir, "-n", ns, "--ignore", "manager=hpa-controller")
	if r.code != 1 {
		t.Fatalf("diff --save-plan: exit %d: %s", r.code, r.stderr)
	}
	scale(6)
	r = kapply(t, "apply", "--plan", planFile, "-f", dir, "-n", ns)
	if r.code == 0 || !strings.Contains(r.stderr, "changed since the plan: spec.replicas") {
		t.Errorf("apply --plan after the autoscaler moved the kept replicas: exit %d, want refused naming spec.replicas:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := liveWeb(t, ns); got != "a 6 busybox:1 nginx:1.27" {
		t.Errorf("after the refused plan: %s, want a 6 busybox:1 nginx:1.27 (nothing written)", got)
	}
	// Planned again and applied while the replicas stay: the image moves,
	// the autoscaler's count stays.
	r = kapply(t, "plan", "--server-side", "-o", planFile, "-f", dir, "-n", ns, "--ignore", "manager=hpa-controller")
	if r.code != 0 {
		t.Fatalf("plan: exit %d: %s", r.code, r.stderr)
	}
	r = kapply(t, "apply", "--plan", planFile, "-f", dir, "-n", ns)
	if r.code != 0 {
		t.Fatalf("apply --plan: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	if got := liveWeb(t, ns); got != "a 6 busybox:1 nginx:1.28" {
		t.Errorf("after apply --plan: %s, want a 6 busybox:1 nginx:1.28", got)
	}
}

// TestIgnoreRulesConfirm: apply -i --respect-ignore shows the plan made
// with the rules (the ignored replicas not in its table) and applies it:
// the replicas stay as the autoscaler left them, the rest is the file's.
func TestIgnoreRulesConfirm(t *testing.T) {
	testcluster.Require(t, cluster)
	dir, ns := ignoreScenario(t)
	writeFile(t, dir, "web.yaml", strings.Replace(ignoreWeb, "nginx:1.27", "nginx:1.28", 1))
	r := kapply(t, "apply", "-i", "--yes", "--respect-ignore", "--ignore", ignoreRuleFlags["manager"], "-f", dir, "-n", ns)
	if r.code != 0 {
		t.Fatalf("apply -i --yes --respect-ignore: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, "spec.replicas") || !strings.Contains(r.stdout, "containers[name=web].image") {
		t.Errorf("apply -i's table names the ignored replicas, or not the image:\n%s", r.stdout)
	}
	if got := liveWeb(t, ns); got != "a 4 busybox:1 nginx:1.28" {
		t.Errorf("after apply -i --respect-ignore: %s, want a 4 busybox:1 nginx:1.28", got)
	}
}
