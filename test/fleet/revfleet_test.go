package fleet_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Two contexts on one cluster and namespace, each with its plan of the
// same objects: applying the PlanList writes each object once; the plan
// that comes second finds them changed since it was made and is refused
// (resourceVersion precondition), never overwriting the first's write.
func TestFleetPlansRacingOnOneNamespace(t *testing.T) {
	requireServers(t)
	f := newFleetConfig(t)
	f.add(t, "same1", 0)
	f.cfg.Contexts["same2"] = &clientcmdapi.Context{Cluster: "server0", AuthInfo: "server0", Namespace: f.namespace["same1"]}
	kubeconfig := f.write(t)
	one, two := configMaps(t, 2, "one"), configMaps(t, 2, "two")
	if r := kapply(t, kubeconfig, "apply", "-f", one, "--context", "same1"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.stderr)
	}
	planFile := filepath.Join(t.TempDir(), "plan.json")
	if r := kapply(t, kubeconfig, "plan", "-f", two, "--contexts", "same*", "-o", planFile); r.code != 0 {
		t.Fatalf("plan: exit %d\n%s", r.code, r.stderr)
	}
	client := kubernetes.NewForConfigOrDie(servers[0].Config)
	before, err := client.CoreV1().ConfigMaps(f.namespace["same1"]).Get(context.Background(), "cm-000", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := kapply(t, kubeconfig, "apply", "--plan", planFile, "-f", two, "--max-parallel", "1")
	if r.code == 0 {
		t.Fatalf("both plans of one namespace applied: exit 0\n%s", r.stderr)
	}
	rows := matrix(t, r.stderr)
	if rows["same1"].configured != "2" || rows["same2"].configured == "2" || rows["same2"].failed == "0" {
		t.Errorf("rows %+v and %+v: want same1 to write both, same2 refused", rows["same1"], rows["same2"])
	}
	after, err := client.CoreV1().ConfigMaps(f.namespace["same1"]).Get(context.Background(), "cm-000", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.Data["k"] != "two" || after.Generation != before.Generation && after.ResourceVersion == before.ResourceVersion {
		t.Errorf("cm-000 after: %v rv %s", after.Data, after.ResourceVersion)
	}
	if !strings.Contains(r.stderr, "[same2] failed") {
		t.Errorf("same2 not reported failed:\n%s", r.stderr)
	}
}

// Context names with brackets, spaces, unicode and an unparsable glob are
// picked by their exact names; the exit code is 0 when every cluster is
// unchanged.
func TestFleetOddContextNames(t *testing.T) {
	requireServers(t)
	f := newFleetConfig(t)
	names := []string{"a b", "ü[1]", "bad[", "x{y}"}
	for i, name := range names {
		f.add(t, name, i%3)
	}
	kubeconfig := f.write(t)
	file := configMaps(t, 2, "one")
	for _, name := range names {
		r := kapply(t, kubeconfig, "apply", "-f", file, "--contexts", name)
		if r.code != 0 || f.countConfigMaps(t, name) != 2 {
			t.Errorf("--contexts %q: exit %d\n%s", name, r.code, r.stderr)
		}
	}
	planFile := filepath.Join(t.TempDir(), "plan.json")
	if r := kapply(t, kubeconfig, "plan", "-f", file, "--all-contexts", "-o", planFile); r.code != 0 {
		t.Fatalf("plan: exit %d\n%s", r.code, r.stderr)
	}
	if r := kapply(t, kubeconfig, "apply", "--plan", planFile, "-f", file); r.code != 0 {
		t.Errorf("apply --plan with all unchanged: exit %d\n%s", r.code, r.stderr)
	}
	if r := kapply(t, kubeconfig, "apply", "-f", file, "--all-contexts"); r.code != 0 {
		t.Errorf("apply unchanged: exit %d\n%s", r.code, r.stderr)
	}
}

// Secret values changed across contexts never show: not in the tables of
// plan, diff --save-plan and apply --confirm, nor in -o events, the
// matrix, the PlanList or a refused plan's error.
func TestFleetSecretValuesNeverShown(t *testing.T) {
	requireServers(t)
	f := newFleetConfig(t)
	f.add(t, "s0", 0)
	f.add(t, "s1", 1)
	kubeconfig := f.write(t)
	secret := func(value string) string {
		path := filepath.Join(t.TempDir(), "secret.yaml")
		writeFile(t, path, "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\nstringData:\n  password: "+value+"\n  other: same-"+value+"\n")
		return path
	}
	old, next := secret("OLDvalue7731"), secret("NEWvalue9913")
	if r := kapply(t, kubeconfig, "apply", "-f", old, "--contexts", "s*"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.stderr)
	}
	planFile := filepath.Join(t.TempDir(), "plan.json")
	diffPlan := filepath.Join(t.TempDir(), "diff.json")
	runs := []result{
		kapply(t, kubeconfig, "plan", "-f", next, "--contexts", "s*", "-o", planFile),
		kapply(t, kubeconfig, "plan", "-f", next, "--contexts", "s*", "-o", "-"),
		kapply(t, kubeconfig, "diff", "-f", next, "--contexts", "s*", "--save-plan", diffPlan),
	}
	// s1's Secret changes after planning: its plan is refused, and says why.
	if r := kapply(t, kubeconfig, "apply", "-f", secret("MIDvalue5521"), "--context", "s1"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.stderr)
	}
	runs = append(runs,
		kapply(t, kubeconfig, "apply", "--plan", planFile, "-f", next, "-o", "events"),
		kapply(t, kubeconfig, "apply", "-f", secret("LASTvalue3318"), "--contexts", "s*", "--confirm", "--yes", "-o", "events"),
	)
	for i, r := range runs {
		for _, v := range []string{"OLDvalue7731", "NEWvalue9913", "MIDvalue5521", "LASTvalue3318"} {
			for _, enc := range []string{v, base64.StdEncoding.EncodeToString([]byte(v))} {
				if strings.Contains(r.stdout+r.stderr, enc) {
					t.Errorf("run %d shows a Secret value %q:\nstdout:\n%s\nstderr:\n%s", i, enc, r.stdout, r.stderr)
				}
			}
		}
	}
	if r := runs[3]; r.code == 0 || !strings.Contains(r.stderr, "[s1]") {
		t.Errorf("apply --plan with s1's Secret changed since: exit %d\n%s", r.code, r.stderr)
	}
	for _, path := range []string{planFile, diffPlan} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), "NEWvalue9913") || strings.Contains(string(data), base64.StdEncoding.EncodeToString([]byte("NEWvalue9913"))) {
			t.Errorf("%s holds a Secret value", path)
		}
	}
}

// A context whose exec credential plugin fails fails alone: the others
// apply, the run exits 1, and a plan over them all writes no PlanList.
func TestFleetExecCredentialFailsForOneContext(t *testing.T) {
	requireServers(t)
	f := newFleetConfig(t)
	f.add(t, "e0", 0)
	f.add(t, "e1", 1)
	f.cfg.Clusters["execfail"] = f.cfg.Clusters["server2"]
	f.cfg.AuthInfos["execfail"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
		APIVersion: "client.authentication.k8s.io/v1", Command: "sh", Args: []string{"-c", "echo token expired >&2; exit 3"},
		InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
	}}
	f.cfg.Contexts["execfail"] = &clientcmdapi.Context{Cluster: "execfail", AuthInfo: "execfail", Namespace: "default"}
	kubeconfig := f.write(t)
	file := configMaps(t, 2, "one")
	planFile := filepath.Join(t.TempDir(), "plan.json")
	r := kapply(t, kubeconfig, "plan", "-f", file, "--all-contexts", "-o", planFile)
	if r.code != 1 || !strings.Contains(r.stderr, "1 of 3 cluster(s) made none") {
		t.Errorf("plan: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(planFile); !os.IsNotExist(err) {
		t.Errorf("a PlanList was written: %v", err)
	}
	r = kapply(t, kubeconfig, "apply", "-f", file, "--all-contexts")
	if r.code != 1 || f.countConfigMaps(t, "e0") != 2 || f.countConfigMaps(t, "e1") != 2 {
		t.Errorf("apply: exit %d\n%s", r.code, r.stderr)
	}
	if rows := matrix(t, r.stderr); rows["execfail"].firstError == "-" || rows["e0"].created != "2" {
		t.Errorf("rows %+v", rows)
	}
}

// SIGINT in the middle of a run over 30 contexts: every context reported
// finished holds all its objects, one reported not started holds none,
// the run does not exit 0, and every -o events line on stdout is whole
// JSON naming its context.
func TestFleetInterruptedMidRun(t *testing.T) {
	requireServers(t)
	f := newFleetConfig(t)
	names := thirty(t, f)
	kubeconfig := f.write(t)
	file := configMaps(t, 20, "one")
	cmd := kapplyCommand(t, kubeconfig, "apply", "-f", file, "--all-contexts", "--max-parallel", "2", "-o", "events")
	var out bytes.Buffer
	cmd.Stdout = &out
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var errText strings.Builder
	scanner := bufio.NewScanner(stderr)
	sent := false
	for scanner.Scan() {
		line := scanner.Text()
		errText.WriteString(line + "\n")
		if !sent && strings.Contains(line, "] finished") {
			sent = true
			_ = cmd.Process.Signal(os.Interrupt)
		}
	}
	err = cmd.Wait()
	if err == nil {
		t.Fatalf("an interrupted run exited 0:\n%s", errText.String())
	}
	finished := regexp.MustCompile(`(?m)^\[(c\d\d)\] finished`).FindAllStringSubmatch(errText.String(), -1)
	done := map[string]bool{}
	for _, m := range finished {
		done[m[1]] = true
		if n := f.countConfigMaps(t, m[1]); n != 20 {
			t.Errorf("%s reported finished with %d of 20 ConfigMaps", m[1], n)
		}
	}
	if len(done) == len(names) {
		t.Logf("every context finished before the signal landed")
	}
	for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		var ev struct {
			Context string `json:"context"`
		}
		if line == "" {
			continue
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil || ev.Context == "" {
			t.Errorf("not a whole event line: %q (%v)", line, err)
		}
	}
	rows := matrix(t, errText.String())
	for _, name := range names {
		row, ok := rows[name]
		if !ok {
			t.Errorf("%s has no row in the matrix", name)
			continue
		}
		if row.wave == "-" || strings.Contains(row.firstError, "not started") {
			if n := f.countConfigMaps(t, name); n != 0 {
				t.Errorf("%s reported not started with %d ConfigMaps", name, n)
			}
		}
		if !done[name] && row.firstError == "-" {
			t.Errorf("%s not finished but its row reports no error: %+v", name, row)
		}
	}
}

// A PlanList's canary whose plan is stale stops the run before any other
// context writes; --context runs one plan of the list alone; a glob
// matching nothing and --context with --contexts are refused.
func TestFleetPlanListCanaryAndPicks(t *testing.T) {
	requireServers(t)
	f := newFleetConfig(t)
	for i := range 4 {
		f.add(t, fmt.Sprintf("p%d", i), i%3)
	}
	kubeconfig := f.write(t)
	file := configMaps(t, 3, "one")
	planFile := filepath.Join(t.TempDir(), "plan.json")
	if r := kapply(t, kubeconfig, "plan", "-f", file, "--all-contexts", "-o", planFile); r.code != 0 {
		t.Fatalf("plan: exit %d\n%s", r.code, r.stderr)
	}
	if r := kapply(t, kubeconfig, "apply", "-f", configMaps(t, 1, "early"), "--context", "p0"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.stderr)
	}
	r := kapply(t, kubeconfig, "apply", "--plan", planFile, "-f", file, "--canary", "1")
	if r.code != 1 {
		t.Errorf("a stale canary plan: exit %d\n%s", r.code, r.stderr)
	}
	for _, name := range []string{"p1", "p2", "p3"} {
		if n := f.countConfigMaps(t, name); n != 0 {
			t.Errorf("%s wrote %d ConfigMaps after its canary failed", name, n)
		}
	}
	if r := kapply(t, kubeconfig, "apply", "--plan", planFile, "-f", file, "--context", "p2"); r.code != 0 || f.countConfigMaps(t, "p2") != 3 || f.countConfigMaps(t, "p3") != 0 {
		t.Errorf("--context p2: exit %d\n%s", r.code, r.stderr)
	}
	if r := kapply(t, kubeconfig, "apply", "--plan", planFile, "-f", file, "--contexts", "zz*"); r.code == 0 || !strings.Contains(r.stderr, `no context matches "zz*"`) {
		t.Errorf("--contexts zz*: exit %d\n%s", r.code, r.stderr)
	}
	if r := kapply(t, kubeconfig, "apply", "--plan", planFile, "-f", file, "--contexts", "p3", "--context", "p3"); r.code != 1 || f.countConfigMaps(t, "p3") != 0 {
		t.Errorf("--context with --contexts: exit %d\n%s", r.code, r.stderr)
	}
	// p2's plan ran: the list again applies p1 and p3 (the plan of p2 is
	// stale now, and p0's was already).
	r = kapply(t, kubeconfig, "apply", "--plan", planFile, "-f", file, "--contexts", "p1,p3")
	if r.code != 0 || f.countConfigMaps(t, "p1") != 3 || f.countConfigMaps(t, "p3") != 3 || !strings.Contains(r.stderr, "not picked are not applied: p0, p2") {
		t.Errorf("--contexts p1,p3: exit %d\n%s", r.code, r.stderr)
	}
}

// A context named with a newline or a terminal escape cannot forge a line
// of another context, nor send the escape to the terminal: its prefix and
// matrix row quote it.
func TestFleetContextNameCannotForgeLines(t *testing.T) {
	requireServers(t)
	f := newFleetConfig(t)
	f.add(t, "c00", 0)
	evil := "x\n[c00] finished (forged)\x1b[2J"
	f.add(t, evil, 1)
	kubeconfig := f.write(t)
	file := configMaps(t, 1, "one")
	planFile := filepath.Join(t.TempDir(), "plan.json")
	for _, args := range [][]string{
		{"apply", "-f", file, "--all-contexts"},
		{"plan", "-f", file, "--all-contexts", "-o", planFile},
		{"apply", "-f", file, "--all-contexts", "--confirm", "--yes"},
	} {
		r := kapply(t, kubeconfig, args...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, r.code, r.stderr)
		}
		text := r.stdout + r.stderr
		if strings.Contains(text, "\n[c00] finished (forged)") || strings.Contains(text, "\x1b") {
			t.Errorf("%v: a context's name forged a line:\n%q", args, text)
		}
		if !strings.Contains(text, strconv.Quote(evil)) {
			t.Errorf("%v: the context is not named quoted:\n%q", args, text)
		}
	}
}
