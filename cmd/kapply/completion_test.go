package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kapply/kapply/internal/fixture"
	"github.com/kapply/kapply/internal/testcluster"
)

// completeOn runs `kapply __complete ARGS` against the test cluster, as a
// shell's completion script does at a TAB, and returns the values offered
// and cobra's directive line (":4" is "no file completion").
func completeOn(t *testing.T, kubeconfig string, args ...string) (values []string, directive string) {
	t.Helper()
	r := kapplyArgs(t, append([]string{"__complete", "--kubeconfig=" + kubeconfig}, args...)...)
	if r.code != 0 {
		t.Fatalf("__complete %s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
	}
	for line := range strings.Lines(r.stdout) {
		line = strings.TrimSuffix(line, "\n")
		if strings.HasPrefix(line, ":") {
			return values, line
		}
		value, _, _ := strings.Cut(line, "\t") // a description may follow
		values = append(values, value)
	}
	t.Fatalf("__complete %s: no directive line in %q", strings.Join(args, " "), r.stdout)
	return nil, ""
}

// TestCompletionValuesFromTheCluster: the completion of --namespace,
// --context, --applyset and of kinds and names offers what the kubeconfig
// and the server hold, filtered by what is typed.
func TestCompletionValuesFromTheCluster(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"a.yaml": labelledConfigMap("alpha", "app: x", "k: v"), "b.yaml": labelledConfigMap("beta", "app: x", "k: v")})
	mustRun(t, "apply", "-f", dir, "-n", ns, "--prune", "--applyset=webset")
	mustRun(t, "apply", "-f", writeFiles(t, map[string]string{"c.yaml": labelledConfigMap("gamma", "app: z", "k: v")}), "-n", ns, "--prune", "--applyset=configmaps/cmset")
	complete := func(args ...string) []string {
		t.Helper()
		values, directive := completeOn(t, cluster.Kubeconfig, args...)
		if directive != ":4" && directive != ":6" {
			t.Errorf("__complete %s: directive %s, want no file completion (:4, or :6 with no space)", strings.Join(args, " "), directive)
		}
		return values
	}
	has := func(what string, got []string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("%s: %v has no %q", what, got, w)
			}
		}
	}

	has("--namespace", complete("apply", "--namespace", ""), ns, "default", "kube-system")
	if got := complete("delete", "-n", ns[:len(ns)-1]); !slices.Equal(got, []string{ns}) {
		t.Errorf("-n %s: %v, want [%s]", ns[:len(ns)-1], got, ns)
	}
	contexts, err := clientcmd.LoadFromFile(cluster.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if got := complete("status", "--context", ""); len(got) != len(contexts.Contexts) || contexts.Contexts[got[0]] == nil {
		t.Errorf("--context: %v, want the kubeconfig's contexts", got)
	}
	for _, command := range []string{"apply", "diff"} {
		if got := complete(command, "-n", ns, "--applyset", ""); !slices.Equal(got, []string{"configmaps/cmset", "webset"}) {
			t.Errorf("%s --applyset: %v, want [configmaps/cmset webset]", command, got)
		}
	}
	if got := complete("apply", "-n", ns, "--applyset", "web"); !slices.Equal(got, []string{"webset"}) {
		t.Errorf("--applyset web: %v", got)
	}
	// A parent of a custom type: its CRD is labelled a parent type.
	group := "completion.kapply.test"
	crd := strings.Replace(fixture.WidgetCRD(group), "metadata: {name: widgets.", `metadata: {labels: {applyset.kubernetes.io/is-parent-type: "true"}, name: widgets.`, 1)
	parent := fmt.Sprintf("apiVersion: %s/v1\nkind: Widget\nmetadata: {name: wset, labels: {applyset.kubernetes.io/id: applyset-test-v1}}\n", group)
	mustRun(t, "apply", "-f", writeFiles(t, map[string]string{"a-crd.yaml": crd, "b-parent.yaml": parent}), "-n", ns)
	if got := complete("apply", "-n", ns, "--applyset", ""); !slices.Equal(got, []string{"configmaps/cmset", "webset", "widgets." + group + "/wset"}) {
		t.Errorf("--applyset with a custom parent: %v", got)
	}

	has("export kinds", complete("export", "-n", ns, ""), "configmaps", "deployments.apps", "secrets", "customresourcedefinitions.apiextensions.k8s.io")
	if got := complete("export", "-n", ns, "configm"); !slices.Equal(got, []string{"configmaps"}) {
		t.Errorf("export configm: %v, want [configmaps]", got)
	}
	// cmset-rev-1-0 holds the first revision of the ConfigMap set cmset.
	if got := complete("export", "-n", ns, "cm", ""); !slices.Equal(got, []string{"alpha", "beta", "cmset", "cmset-rev-1-0", "gamma"}) {
		t.Errorf("export cm NAME: %v", got)
	}
	if got := complete("export", "-n", ns, "configmap", "alpha", ""); slices.Contains(got, "alpha") || !slices.Contains(got, "beta") {
		t.Errorf("export configmap alpha NAME: %v, want beta and not alpha again", got)
	}
	if got := complete("last-applied", "view", "-n", ns, "configmaps/b"); !slices.Equal(got, []string{"configmaps/beta"}) {
		t.Errorf("last-applied view configmaps/b: %v, want [configmaps/beta]", got)
	}
	if got := complete("last-applied", "edit", "-n", ns, "configmaps/alpha", "sec"); !slices.Equal(got, []string{"secrets/"}) {
		t.Errorf("last-applied edit configmaps/alpha sec: %v, want [secrets/]", got)
	}
	if got, _ := completeOn(t, cluster.Kubeconfig, "apply", "-n", ns, ""); slices.Contains(got, "configmaps") {
		t.Errorf("apply takes no TYPE/NAME, but completes kinds: %v", got)
	}
}

// TestCompletionScripts: `kapply completion SHELL` writes cobra's script
// for bash, zsh, fish and powershell, each calling kapply's __complete.
func TestCompletionScripts(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		r := kapplyArgs(t, "completion", shell)
		if r.code != 0 || !strings.Contains(r.stdout, "__complete") || !strings.Contains(r.stdout, "kapply") {
			t.Errorf("completion %s: exit %d, %d bytes\n%s", shell, r.code, len(r.stdout), r.stderr)
		}
	}
}

// TestKubectlPluginCompletion: with kubectl-kapply and
// kubectl_complete-kapply on PATH, kubectl v1.37 completes `kubectl kapply
// ...` with kapply's values (kubectl's __complete, as its shell script
// calls it at a TAB).
func TestKubectlPluginCompletion(t *testing.T) {
	testcluster.Require(t, cluster)
	kubectlPath := testcluster.Kubectl137(t)
	ns := cluster.Namespace(t)
	mustRun(t, "apply", "-f", writeFiles(t, map[string]string{"a.yaml": labelledConfigMap("alpha", "app: x", "k: v")}), "-n", ns)
	bin := t.TempDir()
	if err := os.Symlink(builtKapply(t), filepath.Join(bin, "kubectl-kapply")); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, "kubectl_complete-kapply"), "../kubectl_complete-kapply").CombinedOutput(); err != nil {
		t.Fatalf("building kubectl_complete-kapply: %v\n%s", err, out)
	}
	cmd := exec.Command(kubectlPath, "__complete", "kapply", "export", "-n", ns, "configmaps", "")
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG="+cluster.Kubeconfig)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl __complete kapply: %v\n%s", err, out)
	}
	if got := strings.Fields(string(out)); !slices.Equal(got, []string{"alpha", ":4"}) {
		t.Errorf("kubectl __complete kapply export -n NS configmaps '': %q", out)
	}
}
