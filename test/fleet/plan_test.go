package fleet_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kapply/kapply/pkg/plan"
)

// Plans over 30 contexts on three servers: one PlanList holding a plan per
// context, nothing written while planning; applied with the file's
// contexts as a canary and waves, where a context that now points at
// another cluster is refused alone; -o events lines carry their context
// and match the documented schema; diff --save-plan and apply --confirm
// over the contexts too.
func TestFleetPlanAcrossThirtyContexts(t *testing.T) {
	requireServers(t)
	f := newFleetConfig(t)
	names := thirty(t, f)
	f.add(t, "unplanned", 0)
	kubeconfig := f.write(t)
	file := configMaps(t, 4, "one")
	planFile := filepath.Join(t.TempDir(), "plan.json")

	r := kapply(t, kubeconfig, "plan", "-f", file, "--contexts", "c*", "--max-parallel", "10", "-o", planFile)
	if r.code != 0 {
		t.Fatalf("plan: exit %d\n%s", r.code, r.stderr)
	}
	set := readPlanSet(t, planFile)
	if !reflect.DeepEqual(set.Contexts(), names) {
		t.Fatalf("the plans are for %v, want %v", set.Contexts(), names)
	}
	rows := matrix(t, r.stderr)
	for _, name := range names {
		p, _ := set.For(name)
		if len(p.Items) != 4 || p.Items[0].Action != plan.Create || p.Items[0].ID.Namespace != f.namespace[name] || p.Cluster.Context != name {
			t.Errorf("plan of %s: %+v", name, p)
		}
		if got := rows[name]; got.created != "4" || got.firstError != "-" {
			t.Errorf("plan %s: row %+v, want 4 to create", name, got)
		}
		if n := f.countConfigMaps(t, name); n != 0 {
			t.Errorf("plan %s: %d ConfigMaps written", name, n)
		}
		if !strings.Contains(r.stdout, "["+name+"] Plan: 4 to create, 0 to patch, 0 unchanged.\n") {
			t.Errorf("plan %s: no prefixed table", name)
		}
	}

	// A context the file has no plan for refuses the whole run; a plan of
	// one cluster is not applied over several contexts.
	r = kapply(t, kubeconfig, "apply", "--plan", planFile, "-f", file, "--contexts", "c00,unplanned")
	if r.code != 1 || !strings.Contains(r.stderr, "holds no plan for context(s) unplanned") || f.countConfigMaps(t, "c00") != 0 {
		t.Fatalf("apply --plan with a context not planned: exit %d\n%s", r.code, r.stderr)
	}
	single := filepath.Join(t.TempDir(), "one.json")
	if r = kapply(t, kubeconfig, "plan", "-f", file, "--context", "c00", "-o", single); r.code != 0 {
		t.Fatalf("plan --context: exit %d\n%s", r.code, r.stderr)
	}
	r = kapply(t, kubeconfig, "apply", "--plan", single, "-f", file, "--contexts", "c00")
	if r.code != 1 || !strings.Contains(r.stderr, "holds one cluster's plan") {
		t.Fatalf("a single plan over --contexts: exit %d\n%s", r.code, r.stderr)
	}

	// c01 now points at server 2: its plan names server 1, and only it is
	// refused.
	moved := f.cfg.DeepCopy()
	moved.Contexts["c01"] = &clientcmdapi.Context{Cluster: "server2", AuthInfo: "server2", Namespace: f.namespace["c01"]}
	movedConfig := filepath.Join(t.TempDir(), "moved")
	writeConfig(t, moved, movedConfig)
	r = kapply(t, movedConfig, "apply", "--plan", planFile, "-f", file, "--canary", "1", "--wave-size", "10", "--max-parallel", "5", "-o", "events")
	if r.code != 1 {
		t.Fatalf("apply --plan: exit %d, want 1 (c01 refused)\n%s", r.code, r.stderr)
	}
	checkWaves(t, r.stderr, []int{1, 10, 10, 9}, 5)
	rows = matrix(t, r.stderr)
	events := contextEvents(t, r.stdout)
	for _, name := range names {
		if name == "c01" {
			if got := rows[name]; !strings.Contains(got.firstError, "the plan was made for another cluster") {
				t.Errorf("c01 against another cluster: row %+v", got)
			}
			if n := f.countConfigMaps(t, name); n != 0 {
				t.Errorf("c01: %d ConfigMaps on its planned server", n)
			}
			continue
		}
		if got := rows[name]; got.created != "4" || got.failed != "0" {
			t.Errorf("apply --plan %s: row %+v, want 4 created", name, got)
		}
		if n := f.countConfigMaps(t, name); n != 4 {
			t.Errorf("apply --plan %s: %d ConfigMaps, want 4", name, n)
		}
		if got := events[name]; got["created"] != 4 || got["SummaryType"] != 1 {
			t.Errorf("apply --plan %s: events %v, want 4 created and a summary", name, got)
		}
	}
	if !strings.Contains(r.stderr, "1 of 30 cluster(s) failed") {
		t.Errorf("no count of failed clusters:\n%s", r.stderr)
	}
	// --context picks one plan of the list, verified against that
	// cluster: c02's objects exist now.
	r = kapply(t, kubeconfig, "apply", "--plan", planFile, "-f", file, "--context", "c02")
	if r.code != 1 || !strings.Contains(r.stderr, "changed since the plan: it was created since") {
		t.Errorf("apply --plan --context c02 after its apply: exit %d\n%s", r.code, r.stderr)
	}

	// diff --save-plan over the contexts saves what it shows: c01 creates,
	// the others patch; applying it brings all 30 to the new value.
	changed := configMaps(t, 4, "two")
	diffPlan := filepath.Join(t.TempDir(), "diff.json")
	r = kapply(t, kubeconfig, "diff", "-f", changed, "--contexts", "c*", "--max-parallel", "30", "--save-plan", diffPlan)
	if r.code != 1 {
		t.Fatalf("diff --save-plan: exit %d, want 1\n%s", r.code, r.stderr)
	}
	set = readPlanSet(t, diffPlan)
	if p, _ := set.For("c01"); len(set.Plans) != 30 || p.Items[0].Action != plan.Create {
		t.Fatalf("diff's plans: %v", set.Contexts())
	}
	if p, _ := set.For("c00"); p.Items[0].Action != plan.Update {
		t.Errorf("diff's plan of c00: %+v", p.Items[0])
	}
	r = kapply(t, kubeconfig, "apply", "--plan", diffPlan, "-f", changed, "--contexts", "c*", "--max-parallel", "30")
	if r.code != 0 {
		t.Fatalf("apply --plan of diff's plans: exit %d\n%s", r.code, r.stderr)
	}
	rows = matrix(t, r.stderr)
	if got := rows["c01"]; got.created != "4" {
		t.Errorf("c01: row %+v, want 4 created", got)
	}
	if got := rows["c29"]; got.configured != "4" {
		t.Errorf("c29: row %+v, want 4 configured", got)
	}

	// --confirm over contexts: a table per context, one question (--yes
	// answers it), then each context's plan as shown.
	third := configMaps(t, 4, "three")
	r = kapply(t, kubeconfig, "apply", "-f", third, "--contexts", "c0*", "-i", "--yes")
	if r.code != 0 {
		t.Fatalf("apply --confirm --yes: exit %d\n%s", r.code, r.stderr)
	}
	for _, name := range names[:10] {
		if !regexp.MustCompile(`(?m)^\[` + name + `\] \S+\s+ConfigMap\s+cm-000\s+patch\s+data\.k\s`).MatchString(r.stdout) {
			t.Errorf("%s: no row of its table:\n%s", name, r.stdout)
		}
	}
	if !strings.Contains(r.stdout, "Plans of 10 context(s), 10 with changes.") {
		t.Errorf("no summary of the plans:\n%s", r.stdout)
	}
	if got := matrix(t, r.stderr)["c09"]; got.configured != "4" {
		t.Errorf("c09 after --confirm: row %+v", got)
	}
}

// readPlanSet decodes a PlanList file.
func readPlanSet(t *testing.T, path string) *plan.Set {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, set, err := plan.DecodeAny(f)
	if err != nil || p != nil {
		t.Fatalf("%s: %v (a single plan: %v)", path, err, p != nil)
	}
	return set
}

func writeConfig(t *testing.T, cfg *clientcmdapi.Config, path string) {
	t.Helper()
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
}

// contextEvents validates every -o events line against the documented
// schema and counts, per context, the operations and summaries; a line
// without a context fails the test.
func contextEvents(t *testing.T, stdout string) map[string]map[string]int {
	t.Helper()
	sch := eventsSchema(t)
	out := map[string]map[string]int{}
	for i, line := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(line))
		if err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", i+1, err, line)
		}
		if err := sch.Validate(inst); err != nil {
			t.Fatalf("line %d does not match docs/events.schema.json: %v\n%s", i+1, err, line)
		}
		var ev struct{ Context, Type, Operation string }
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Context == "" {
			t.Fatalf("line %d has no context:\n%s", i+1, line)
		}
		if out[ev.Context] == nil {
			out[ev.Context] = map[string]int{}
		}
		out[ev.Context][ev.Operation]++
		out[ev.Context][ev.Type]++
	}
	return out
}

func eventsSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "docs", "events.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("events.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("events.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// Plans with failing clusters: planning where one cluster refuses
// connections and one hangs writes no file and names both; plans made
// where they all answer, applied after one context's server refuses
// connections, another's hangs past --cluster-timeout, and one is denied
// by RBAC: every other cluster applies its plan, the matrix names each
// failure, exit 1.
func TestFleetPlanFailuresStayInTheirCluster(t *testing.T) {
	requireServers(t)
	f := newFleetConfig(t)
	var good []string
	for i := range 6 {
		name := fmt.Sprintf("good%d", i)
		f.add(t, name, i%3)
		good = append(good, name)
	}
	deniedNS := servers[1].Namespace(t)
	readOnly := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"}}}
	f.merge(t, "denied", servers[1].UserKubeconfig(t, deniedNS, "fleet-reader", readOnly))
	f.cfg.Contexts["denied"].Namespace = deniedNS
	broken := &fleetConfig{cfg: f.cfg.DeepCopy()}
	broken.addURL("refused", "https://"+closedPort(t))
	broken.addURL("hung", "https://"+silentServer(t))
	file := configMaps(t, 3, "one")
	planFile := filepath.Join(t.TempDir(), "plan.json")

	r := kapply(t, broken.write(t), "plan", "-f", file, "--contexts", "good*,denied,refused,hung", "--cluster-timeout", "10s", "-o", planFile)
	if r.code != 1 || !strings.Contains(r.stderr, "No plan was written to "+planFile+": 2 of 9 cluster(s) made none") {
		t.Fatalf("plan with two clusters down: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(planFile); !os.IsNotExist(err) {
		t.Fatalf("a plan file was written: %v", err)
	}
	rows := matrix(t, r.stderr)
	// A hung server fails by the cluster's deadline or, first, by the
	// connection's own retries bounded by it (a TLS handshake timeout).
	hung := "(timed out after 10s|TLS handshake timeout)"
	for name, want := range map[string]string{"refused": "refused", "hung": hung} {
		if got := rows[name]; !regexp.MustCompile(want).MatchString(got.firstError) {
			t.Errorf("plan %s: first error %q, want it to say %q", name, got.firstError, want)
		}
	}

	r = kapply(t, f.write(t), "plan", "-f", file, "--contexts", "good*,denied", "-o", planFile)
	if r.code != 0 {
		t.Fatalf("plan: exit %d\n%s", r.code, r.stderr)
	}
	// good0's server now refuses connections, good1's hangs.
	later := &fleetConfig{cfg: f.cfg.DeepCopy()}
	later.addURL("good0", "https://"+closedPort(t))
	later.addURL("good1", "https://"+silentServer(t))
	r = kapply(t, later.write(t), "apply", "--plan", planFile, "-f", file, "--max-parallel", "7", "--cluster-timeout", "10s")
	if r.code != 1 {
		t.Fatalf("apply --plan: exit %d, want 1\n%s", r.code, r.stderr)
	}
	if r.took > 2*time.Minute {
		t.Errorf("the run took %s: the hung server held it", r.took)
	}
	rows = matrix(t, r.stderr)
	for _, name := range good[2:] {
		if got := rows[name]; got.created != "3" || got.failed != "0" || got.firstError != "-" {
			t.Errorf("%s: row %+v, want 3 created", name, got)
		}
		if n := f.countConfigMaps(t, name); n != 3 {
			t.Errorf("%s: %d ConfigMaps, want 3", name, n)
		}
	}
	for name, want := range map[string]string{"good0": "refused", "good1": hung, "denied": "forbidden"} {
		got := rows[name]
		if !regexp.MustCompile(want).MatchString(got.firstError) || got.created != "0" && got.created != "-" {
			t.Errorf("%s: row %+v, want its first error to say %q and nothing created", name, got, want)
		}
		if !regexp.MustCompile(`(?m)^\[` + name + `\] failed \(`).MatchString(r.stderr) {
			t.Errorf("%s: not reported failed", name)
		}
	}
	if got := rows["denied"]; got.failed != "3" {
		t.Errorf("denied: %s objects failed, want 3", got.failed)
	}
	if !strings.Contains(r.stderr, "3 of 7 cluster(s) failed") {
		t.Errorf("no count of failed clusters:\n%s", r.stderr)
	}
}
