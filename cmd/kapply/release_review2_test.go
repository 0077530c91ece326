package main

import (
	"os/exec"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/internal/testcluster"
)

// resourcedDeployment is ownedDeployment with the container's resources
// (limits.cpu) when cpu is set.
func resourcedDeployment(name, cpu string) string {
	out := ownedDeployment(name, "2")
	if cpu != "" {
		out += "        resources:\n          limits: {cpu: " + cpu + "}\n"
	}
	return out
}

func liveCPU(t *testing.T, ns, name string) string {
	t.Helper()
	containers, _, _ := unstructured.NestedSlice(liveObject(t, deployments, ns, name).Object, "spec", "template", "spec", "containers")
	if len(containers) == 0 {
		return ""
	}
	cpu, _, _ := unstructured.NestedString(containers[0].(map[string]any), "resources", "limits", "cpu")
	return cpu
}

// TestReleaseOfListElementFieldSurvivesServerSide: release of a field
// inside a list element, named by key ([name=web]; an index is refused
// at parse), then the field dropped from the file, then migrate
// --to=server-side or apply --server-side (kapply's or kubectl's
// upgrade): the released resources stay. (Held on main 291b62e.)
func TestReleaseOfListElementFieldSurvivesServerSide(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	for _, c := range []struct{ name, field, then string }{

		{"bykey-migrate", "spec.template.spec.containers[name=web].resources", "migrate"},
		{"bykey-ssa", "spec.template.spec.containers[name=web].resources", "apply"},
		{"bykey-kubectl", "spec.template.spec.containers[name=web].resources", "kubectl"},
	} {
		mustRun(t, "apply", "-f", writeFiles(t, map[string]string{"d.yaml": resourcedDeployment(c.name, "250m")}), "-n", ns)
		without := writeFiles(t, map[string]string{"d.yaml": resourcedDeployment(c.name, "")})
		mustRun(t, "release", "-f", without, "-n", ns, "--field", c.field)
		switch c.then {
		case "migrate":
			mustRun(t, "migrate", "--to=server-side", "-f", without, "-n", ns)
			mustRun(t, "apply", "--server-side", "-f", without, "-n", ns)
		case "apply":
			mustRun(t, "apply", "--server-side", "-f", without, "-n", ns)
		case "kubectl":
			kubectl, err := exec.LookPath("kubectl")
			if err != nil {
				t.Fatalf("no kubectl on PATH: %v", err)
			}
			out, err := exec.Command(kubectl, "--kubeconfig", cluster.Kubeconfig, "apply", "--server-side", "-f", without, "-n", ns).CombinedOutput()
			if err != nil {
				t.Fatalf("kubectl apply --server-side: %v\n%s", err, out)
			}
		}
		if got := liveCPU(t, ns, c.name); got != "250m" {
			t.Errorf("%s: released %s, then %s: limits.cpu %q, want 250m (released)", c.name, c.field, c.then, got)
		}
	}
}

// TestReleaseOfServerSideAppliedField: an object applied server-side
// (kubectl, the Apply manager, owns spec.replicas); release
// spec.replicas; the file drops it; the next apply --server-side must
// leave replicas at 3, or release must refuse, saying why. On main
// 291b62e release exited 0 and the apply dropped replicas to 1: release
// edited only client-side apply's Update entries, and kubectl's Apply
// entry still owned spec.replicas.
func TestReleaseOfServerSideAppliedField(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	mustRun(t, "apply", "--server-side", "-f", writeFiles(t, map[string]string{"d.yaml": ownedDeployment("ssa", "3")}), "-n", ns)
	without := writeFiles(t, map[string]string{"d.yaml": ownedDeployment("ssa", "")})
	r := kapply(t, "release", "-f", without, "-n", ns, "--field", "spec.replicas")
	if r.code != 0 {
		if !strings.Contains(r.stderr, "spec.replicas") {
			t.Errorf("release refused without naming the field: exit %d\n%s", r.code, r.stderr)
		}
		return
	}
	mustRun(t, "apply", "--server-side", "-f", without, "-n", ns)
	assertReplicas(t, ns, "ssa", 3, "release (exit 0) and apply --server-side")
}
