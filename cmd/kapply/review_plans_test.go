package main

import (
	"fmt"
	"github.com/kapply/kapply/internal/fixture"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// awaitQuotingPolicy installs quotingPolicy in ns and waits until it
// denies a Secret (admission policies take effect some time after they
// are created).
func awaitQuotingPolicy(t *testing.T, ns string) {
	t.Helper()
	quotingPolicy(t, ns)
	probe := writeFiles(t, map[string]string{"probe.yaml": fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: probe}\ndata: {policy: %s}\n", b64("probe"))})
	deadline := time.Now().Add(90 * time.Second)
	for kapply(t, "apply", "-f", probe, "-n", ns).code != exitFailed {
		if time.Now().After(deadline) {
			t.Fatal("the admission policy never denied a Secret")
		}
		_ = dynamicClient(t).Resource(secrets).Namespace(ns).Delete(t.Context(), "probe", metav1.DeleteOptions{})
		time.Sleep(200 * time.Millisecond)
	}
}

// TestApplyPlanMasksSecretValueInServerError: a saved plan patches an
// existing Secret (client-side, and server-side) with a value an
// admission policy denies, quoting it. apply --plan restores the value
// from the -f files and sends it; the refusal, printed as text and as
// -o events, shows it masked, as apply without a plan does.
func TestApplyPlanMasksSecretValueInServerError(t *testing.T) {
	ns := cluster.Namespace(t)
	const value = "den1ed-plan-value"
	secret := func(data string) string {
		return "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\ndata: {" + data + "}\n"
	}
	mustRunKapply(t, "apply", "-f", writeFiles(t, map[string]string{"s.yaml": secret("x: " + b64("allowed"))}), "-n", ns)
	awaitQuotingPolicy(t, ns)
	dir := writeFiles(t, map[string]string{"s.yaml": secret("x: " + b64("allowed") + ", policy: " + b64(value))})
	for _, mode := range [][]string{nil, {"--server-side"}} {
		for _, output := range [][]string{nil, {"-o", "events"}} {
			// A plan each time: a refused server-side apply has moved
			// the object's fields to its manager first.
			planFile := filepath.Join(t.TempDir(), "plan.json")
			mustRunKapply(t, append([]string{"plan", "-f", dir, "-n", ns, "-o", planFile}, mode...)...)
			r := kapply(t, append([]string{"apply", "--plan", planFile, "-f", dir, "-n", ns}, output...)...)
			what := fmt.Sprintf("plan %v, apply --plan %v", mode, output)
			if r.code != exitFailed || !strings.Contains(r.stdout+r.stderr, `secret value \"***\"`) && !strings.Contains(r.stdout+r.stderr, `secret value "***"`) {
				t.Errorf("%s: exit %d, want the policy's refusal with the value masked\nstdout %s\nstderr %s", what, r.code, r.stdout, r.stderr)
			}
			assertAbsent(t, what, r.stdout+r.stderr, []string{value, b64(value)})
		}
	}
}

// TestConfirmTableShowsControlCharactersEscaped: a custom resource's
// field (under preserve-unknown-fields, where any key is allowed) named
// with a newline and tabs cannot add a row to the table a person
// confirms: the field's name is printed quoted, on its object's row.
func TestConfirmTableShowsControlCharactersEscaped(t *testing.T) {
	ns := cluster.Namespace(t)
	group := "spoof.example.com"
	mustRunKapply(t, "apply", "-f", writeFiles(t, map[string]string{"crd.yaml": fixture.WidgetCRD(group)}))
	t.Cleanup(func() { kapply(t, "delete", "crd", "widgets."+group) })
	dir := writeFiles(t, map[string]string{"w.yaml": fixture.Widget(group, "", "w", "config: {a: 1}")})
	mustRunKapply(t, "apply", "-f", dir, "-n", ns)
	spoof := `"x\nkube-system\tSecret\tadmin\tdelete"`
	writeFile(t, dir, "w.yaml", fixture.Widget(group, "", "w", "config: {a: 1, "+spoof+": 2}"))
	r := mustRunKapply(t, "apply", "-f", dir, "-n", ns, "--confirm", "--yes")
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(line, "kube-system") {
			t.Errorf("a field's name added a row to the table:\n%s", r.stdout)
		}
	}
	if !strings.Contains(r.stdout, `\n`) {
		t.Errorf("the field's name is not shown escaped:\n%s", r.stdout)
	}
}

// TestApplyPlanSecretFromAnotherNamespace: a plan made with -n A, run
// with the same files and -n B, finds no Secret of the plan in the files
// (they land in B): it is refused, telling to give the files as the plan
// was made, in words of the CLI (-f), not of the library.
func TestApplyPlanSecretFromAnotherNamespace(t *testing.T) {
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"s.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\nstringData: {password: pw-in-file}\n"})
	planFile := filepath.Join(t.TempDir(), "plan.json")
	mustRunKapply(t, "plan", "-f", dir, "-n", ns, "-o", planFile)
	r := kapply(t, "apply", "--plan", planFile, "-f", dir, "-n", "default")
	if r.code != exitFailed || strings.Contains(r.stderr, "ExecuteOptions") || !strings.Contains(r.stderr, "-f") || !strings.Contains(r.stderr, "namespace") {
		t.Errorf("exit %d, want a refusal naming -f and the namespace\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	assertAbsent(t, "refusal", r.stdout+r.stderr, []string{"pw-in-file"})
}
