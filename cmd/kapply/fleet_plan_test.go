package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kapply/kapply/pkg/plan"
)

// eventsByContext splits -o events lines of a run over several contexts
// by their context field, each context's lines read as one run's
// (readEvents: the documented schema, its own summary last); a line
// without a context fails the test.
func eventsByContext(t *testing.T, stdout string) map[string][]jsonEvent {
	t.Helper()
	lines := map[string]*strings.Builder{}
	for _, line := range strings.SplitAfter(stdout, "\n") {
		if line == "" {
			continue
		}
		var ev struct{ Context string }
		if err := json.Unmarshal([]byte(line), &ev); err != nil || ev.Context == "" {
			t.Fatalf("a line without its context (%v): %q", err, line)
		}
		if lines[ev.Context] == nil {
			lines[ev.Context] = &strings.Builder{}
		}
		lines[ev.Context].WriteString(line)
	}
	out := map[string][]jsonEvent{}
	for ctx, b := range lines {
		out[ctx] = readEvents(t, b.String())
	}
	return out
}

// -o events over several contexts: every line of apply, diff and delete
// carries its context and matches the schema, no line is prefixed, and
// each context's lines end with its own summary.
func TestFleetEventsCarryTheirContext(t *testing.T) {
	kubeconfig, _ := fleetKubeconfig(t, "ev-a", "ev-b", "ev-c")
	dir := writeFiles(t, map[string]string{"cm.yaml": fleetConfigMap})
	file := filepath.Join(dir, "cm.yaml")
	changed := writeFiles(t, map[string]string{"cm.yaml": strings.Replace(fleetConfigMap, "k: v1", "k: v2", 1)})
	for _, step := range []struct {
		args []string
		code int
		want string // the first event's type and operation
	}{
		{[]string{"apply", "-f", file}, 0, "ApplyType created"},
		{[]string{"diff", "-f", filepath.Join(changed, "cm.yaml")}, 1, "DiffType configured"},
		{[]string{"delete", "-f", file}, 0, "DeleteType deleted"},
	} {
		r := kapplyKubeconfig(t, kubeconfig, append(step.args, "--contexts", "ev-*", "-o", "events")...)
		if r.code != step.code {
			t.Fatalf("%v: exit %d\n%s%s", step.args, r.code, r.stdout, r.stderr)
		}
		if strings.Contains(r.stdout, "[ev-") {
			t.Errorf("%v: a prefixed line on stdout:\n%s", step.args, r.stdout)
		}
		byContext := eventsByContext(t, r.stdout)
		if len(byContext) != 3 {
			t.Fatalf("%v: events of %d contexts, want 3:\n%s", step.args, len(byContext), r.stdout)
		}
		for ctx, events := range byContext {
			if got := events[0].Type + " " + events[0].Operation; got != step.want || events[0].Context != ctx {
				t.Errorf("%v %s: first event %q (context %q), want %q", step.args, ctx, got, events[0].Context, step.want)
			}
		}
		if !strings.Contains(r.stderr, "[ev-a] started (wave 0") {
			t.Errorf("%v: no start line on stderr:\n%s", step.args, r.stderr)
		}
	}
}

// kapply plan --contexts -o - writes the PlanList on stdout (tables on
// stderr, prefixed); a context that cannot be planned leaves no file at
// all, and says so.
func TestFleetPlanToStdoutAndNoHalfFile(t *testing.T) {
	kubeconfig, namespaces := fleetKubeconfig(t, "pl-a", "pl-b")
	dir := writeFiles(t, map[string]string{"cm.yaml": fleetConfigMap})
	file := filepath.Join(dir, "cm.yaml")
	r := kapplyKubeconfig(t, kubeconfig, "plan", "-f", file, "--contexts", "pl-*", "-o", "-")
	if r.code != 0 {
		t.Fatalf("plan -o -: exit %d\n%s", r.code, r.stderr)
	}
	p, set, err := plan.DecodeAny(strings.NewReader(r.stdout))
	if err != nil || p != nil || !reflect.DeepEqual(set.Contexts(), []string{"pl-a", "pl-b"}) {
		t.Fatalf("stdout is not a PlanList of pl-a, pl-b (%v):\n%s", err, r.stdout)
	}
	if got, _ := set.For("pl-b"); got.Items[0].ID.Namespace != namespaces["pl-b"] {
		t.Errorf("pl-b's plan is for namespace %s, want its context's %s", got.Items[0].ID.Namespace, namespaces["pl-b"])
	}
	if !strings.Contains(r.stderr, "[pl-a] Plan: 1 to create") {
		t.Errorf("no prefixed table on stderr:\n%s", r.stderr)
	}

	bad := writeFiles(t, map[string]string{"bad.yaml": "apiVersion: v1\nkind: Nope\nmetadata:\n  name: x\n"})
	out := filepath.Join(t.TempDir(), "plan.json")
	r = kapplyKubeconfig(t, kubeconfig, "plan", "-f", file, "-f", filepath.Join(bad, "bad.yaml"), "--contexts", "pl-*", "-o", out)
	if r.code != 1 || !strings.Contains(r.stderr, "No plan was written to "+out+": 2 of 2 cluster(s) made none") {
		t.Errorf("plan with an object no cluster can plan: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a plan file was left: %v", err)
	}
	r = kapplyKubeconfig(t, kubeconfig, "plan", "-f", file, "--contexts", "pl-*")
	if r.code != 1 || !strings.Contains(r.stderr, "must specify -o FILE") || strings.Contains(r.stderr, "[pl-a]") {
		t.Errorf("plan --contexts without -o: exit %d\n%s", r.code, r.stderr)
	}
}

// A plan file that is not a plan, or a PlanList edited by hand, is
// refused before any cluster starts; a PlanList's context missing from
// the kubeconfig too.
func TestFleetApplyPlanRefusesBadFiles(t *testing.T) {
	kubeconfig, _ := fleetKubeconfig(t, "bf-a", "bf-b", "other")
	dir := writeFiles(t, map[string]string{"cm.yaml": fleetConfigMap})
	file := filepath.Join(dir, "cm.yaml")
	good := filepath.Join(t.TempDir(), "plan.json")
	if r := kapplyKubeconfig(t, kubeconfig, "plan", "-f", file, "--contexts", "bf-*", "-o", good); r.code != 0 {
		t.Fatalf("plan: exit %d\n%s", r.code, r.stderr)
	}
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	editedData := bytes.Replace(data, []byte(`"context":"bf-b"`), []byte(`"context":"bf-c"`), 1)
	if bytes.Equal(editedData, data) {
		t.Fatalf("the PlanList names no context bf-b:\n%s", data)
	}
	files := writeFiles(t, map[string]string{
		"edited.json":  string(editedData),
		"garbage.json": "\x00\x01not a plan",
	})
	edited, garbage := filepath.Join(files, "edited.json"), filepath.Join(files, "garbage.json")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--plan", edited, "--contexts", "bf-*"}, "the checksum does not match"},
		{[]string{"--plan", edited}, "the checksum does not match"},
		{[]string{"--plan", garbage, "--all-contexts"}, "not a JSON plan document"},
		{[]string{"--plan", good, "--context", "other"}, `none for context "other"`},
	} {
		r := kapplyKubeconfig(t, kubeconfig, append([]string{"apply", "-f", file}, tc.args...)...)
		if r.code != 1 || !strings.Contains(r.stderr, tc.want) || strings.Contains(r.stderr, "started (wave") {
			t.Errorf("%q: exit %d, want 1 and %q before any cluster started:\n%s", tc.args, r.code, tc.want, r.stderr)
		}
	}
}

// apply --confirm over contexts: a table per context, one question; "y"
// executes the plans shown (an object changed in one cluster while the
// question waited is refused there, the rest applied), "n" writes
// nothing anywhere and exits 1.
func TestFleetConfirmAsksOnceAndExecutesThePlansShown(t *testing.T) {
	kubeconfig, namespaces := fleetKubeconfig(t, "cf-a", "cf-b")
	dir := writeFiles(t, map[string]string{"moved.yaml": configMapYAML("moved", "mode", "fast")})
	if r := kapplyKubeconfig(t, kubeconfig, "apply", "-f", dir, "--contexts", "cf-*"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.stderr)
	}
	writeFile(t, dir, "moved.yaml", configMapYAML("moved", "mode", "slow"))
	writeFile(t, dir, "fresh.yaml", configMapYAML("fresh", "k", "v"))

	r := kapplyOnTerminalWith(t, kubeconfig, "n", nil, "apply", "-f", dir, "--contexts", "cf-*", "--confirm")
	if r.code != 1 || !strings.Contains(r.stderr, "apply declined: nothing written") || strings.Contains(r.stdout, "created") {
		t.Fatalf("answered n: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	for ctx, ns := range namespaces {
		if got := configMapData(t, ns, "moved")["mode"]; got != "fast" {
			t.Errorf("%s: answered n, but moved's mode is %v", ctx, got)
		}
	}

	cms := dynamicClient(t).Resource(configMaps).Namespace(namespaces["cf-a"])
	r = kapplyOnTerminalWith(t, kubeconfig, "y", func() {
		if _, err := cms.Patch(context.Background(), "moved", types.MergePatchType, []byte(`{"data":{"mode":"other"}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}, "apply", "-f", dir, "--contexts", "cf-*", "-i")
	if n := strings.Count(r.stdout, prompt); n != 1 {
		t.Errorf("asked %d times, want once:\n%s", n, r.stdout)
	}
	shown := r.stdout[:strings.Index(r.stdout, prompt)]
	for _, want := range []string{"[cf-a] NAMESPACE", "[cf-b] NAMESPACE", "fresh", "data.mode", "Plans of 2 context(s), 2 with changes."} {
		if !strings.Contains(shown, want) {
			t.Errorf("the tables lack %q:\n%s", want, shown)
		}
	}
	if r.code != 1 || !regexp.MustCompile(`(?m)^\[cf-a\] .*changed since the plan: data.mode`).MatchString(r.stderr) || strings.Contains(r.stderr, "[cf-b] error") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if got := configMapData(t, namespaces["cf-a"], "moved")["mode"]; got != "other" {
		t.Errorf("cf-a's moved mode = %v: planned again instead of executing the plan shown", got)
	}
	for ctx, ns := range namespaces {
		if got := configMapData(t, ns, "fresh")["k"]; got != "v" {
			t.Errorf("%s: fresh's k = %v, want v", ctx, got)
		}
	}
	if got := configMapData(t, namespaces["cf-b"], "moved")["mode"]; got != "slow" {
		t.Errorf("cf-b's moved mode = %v, want slow", got)
	}
}

// -o events when the canary fails: the canary's lines say why, and each
// cluster not started has its lines too (an ErrorType, a failed summary),
// so that stdout alone accounts for every context.
func TestFleetEventsOfClustersNotStarted(t *testing.T) {
	kubeconfig, _ := fleetKubeconfig(t, "ns-0", "ns-a", "ns-b")
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	canary := cfg.Contexts["ns-0"]
	cfg.Clusters["closed"] = cfg.Clusters[canary.Cluster].DeepCopy()
	cfg.Clusters["closed"].Server = "https://127.0.0.1:1"
	canary.Cluster = "closed"
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	dir := writeFiles(t, map[string]string{"cm.yaml": fleetConfigMap})
	r := kapplyKubeconfig(t, kubeconfig, "apply", "-f", filepath.Join(dir, "cm.yaml"), "--contexts", "ns-*", "--canary", "1", "-o", "events")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	byContext := eventsByContext(t, r.stdout)
	for _, ctx := range []string{"ns-0", "ns-a", "ns-b"} {
		events := byContext[ctx]
		if len(events) < 2 || events[len(events)-1].Status != statusFailed {
			t.Fatalf("%s: events %+v, want an error and a failed summary", ctx, events)
		}
		errorLine := events[len(events)-2]
		want := "not started: the canary wave failed"
		if ctx == "ns-0" {
			want = "refused"
		}
		if errorLine.Type != errorType || !strings.Contains(errorLine.Error, want) {
			t.Errorf("%s: error line %+v, want it to say %q", ctx, errorLine, want)
		}
	}
}
