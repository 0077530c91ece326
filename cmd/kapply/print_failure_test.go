package main

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	"github.com/kapply/kapply/internal/testcluster"
)

// unprintableConfigMaps are two ConfigMaps, one of which yaml cannot print:
// a DEL character (written "\x7f" in the file) is a value JSON carries and
// the server stores, but yaml.v2 refuses it ("control characters are not
// allowed").
const unprintableConfigMaps = `apiVersion: v1
kind: ConfigMap
metadata: {name: plain}
data: {a: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: odd}
data: {a: "x\x7fy"}
`

// runKubectl137 runs kubectl v1.37 on the test cluster.
func runKubectl137(t *testing.T, path string, args ...string) result {
	t.Helper()
	cmd := exec.Command(path, append(args, "--kubeconfig", cluster.Kubeconfig)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("kubectl %s: %v", strings.Join(args, " "), err)
	}
	r := result{stdout: out.String(), stderr: errOut.String()}
	if exit != nil {
		r.code = exit.ExitCode()
	}
	return r
}

// TestApplyOutputFailsWhenAnObjectCannotBePrinted: with -o yaml, an object
// yaml cannot encode is still applied, but the run exits 1 with an error
// naming the object, its file and yaml's reason; the other object is
// applied and printed (a List of the printable ones). kubectl v1.37 also
// exits 1 ("error: yaml: control characters are not allowed") but prints
// no object and names none. -o json and -o name print everything, exit 0.
func TestApplyOutputFailsWhenAnObjectCannotBePrinted(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"cms.yaml": unprintableConfigMaps})
	file := filepath.Join(dir, "cms.yaml")

	for _, dryRun := range []string{"--dry-run=server", "--dry-run=none", "--dry-run=client"} {
		r := kapply(t, "apply", "-f", dir, "-n", ns, "-o", "yaml", dryRun)
		t.Logf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", dryRun, r.code, r.stdout, r.stderr)
		want := []string{"configmap/odd -n " + ns, file, "but printing it as yaml failed: yaml: control characters are not allowed"}
		if r.code != exitFailed || !errorLineHasAll(r.stderr, want) {
			t.Errorf("%s: exit %d, want 1 and an error line with %q", dryRun, r.code, want)
		}
		var list struct {
			Kind  string
			Items []struct{ Metadata struct{ Name string } }
		}
		if err := yaml.Unmarshal([]byte(r.stdout), &list); err != nil || list.Kind != "List" || len(list.Items) != 1 || list.Items[0].Metadata.Name != "plain" {
			t.Errorf("%s: stdout is not a List of configmap plain alone (%v): %+v", dryRun, err, list)
		}
	}
	if !configMapExists(t, ns, "odd") || !configMapExists(t, ns, "plain") {
		t.Fatalf("both objects should be applied")
	}
	for _, output := range []string{"json", "name"} {
		if r := kapply(t, "apply", "-f", dir, "-n", ns, "-o", output); r.code != 0 || !strings.Contains(r.stdout, "odd") || !strings.Contains(r.stdout, "plain") {
			t.Errorf("-o %s: exit %d, want 0 and both objects:\n%s\n%s", output, r.code, r.stdout, r.stderr)
		}
	}

	if kubectl := testcluster.FindKubectl137(t); kubectl != "" {
		k := runKubectl137(t, kubectl, "apply", "-f", dir, "-n", ns, "-o", "yaml")
		t.Logf("kubectl v1.37: exit %d\nstdout:\n%s\nstderr:\n%s", k.code, k.stdout, k.stderr)
		if k.code != exitFailed || !strings.Contains(k.stderr, "control characters are not allowed") {
			t.Errorf("kubectl v1.37 -o yaml: exit %d, want 1 with yaml's error", k.code)
		}
	}
}

// brokenStdout refuses every write, as a closed pipe does.
type brokenStdout struct{}

func (brokenStdout) Write([]byte) (int, error) { return 0, errors.New("write: broken pipe") }

// TestApplyExitsOneWhenStdoutFails: with every output (lines, -o name,
// -o yaml, -o json), a stdout that refuses writes fails the run: exit 1
// and an error on stderr (naming the object for lines), though the
// objects were applied. The same for delete's lines.
func TestApplyExitsOneWhenStdoutFails(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {a: b}\n"})
	for _, output := range []string{"", "name", "yaml", "json"} {
		var errOut bytes.Buffer
		streams := genericiooptions.IOStreams{In: bytes.NewReader(nil), Out: brokenStdout{}, ErrOut: &errOut}
		code := exitCode(run([]string{"apply", "-f", dir, "-n", ns, "-o", output, "--kubeconfig", cluster.Kubeconfig}, streams), &errOut)
		want := []string{"configmap/cfg", "but printing it", "write: broken pipe"}
		if output == "yaml" || output == "json" {
			want = []string{"writing the objects", "write: broken pipe"}
		}
		if code != exitFailed || !errorLineHasAll(errOut.String(), want) {
			t.Errorf("-o %q: exit %d, want 1 and an error line with %q:\n%s", output, code, want, errOut.String())
		}
	}
	if !configMapExists(t, ns, "cfg") {
		t.Fatalf("cfg was not applied")
	}
	var errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: bytes.NewReader(nil), Out: brokenStdout{}, ErrOut: &errOut}
	code := exitCode(run([]string{"delete", "-f", dir, "-n", ns, "--kubeconfig", cluster.Kubeconfig}, streams), &errOut)
	if want := []string{"configmap/cfg", "deleted, but printing it failed: write: broken pipe"}; code != exitFailed || !errorLineHasAll(errOut.String(), want) {
		t.Errorf("delete: exit %d, want 1 and an error line with %q:\n%s", code, want, errOut.String())
	}
	if configMapExists(t, ns, "cfg") {
		t.Errorf("cfg was not deleted")
	}
}
