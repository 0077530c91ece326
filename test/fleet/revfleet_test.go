package fleet_test

import (
	"context"
	"path/filepath"
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
