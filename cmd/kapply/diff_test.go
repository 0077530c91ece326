package main

import (
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapply/kapply/internal/testcluster"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/diff")

const diffWeb = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: "nginx:1.27", args: ["-g", "daemon off;"]}
`

const diffSettings = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: \"1\", b: \"2\"}\n"

const diffCreds = "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\nstringData: {password: first-pass, user: admin}\n"

const diffSame = "apiVersion: v1\nkind: Service\nmetadata: {name: api}\nspec: {selector: {app: api}, ports: [{port: 80}]}\n"

// diffScenario applies a Deployment, a ConfigMap, a Secret and a Service;
// scales the Deployment through the scale subresource as kubectl-scale;
// then changes the files: a new image, a ConfigMap key dropped and one
// added, a new password, a new ConfigMap, the Service as it was.
func diffScenario(t *testing.T) (dir, ns string) {
	t.Helper()
	ns = cluster.Namespace(t)
	dir = writeFiles(t, map[string]string{"1-web.yaml": diffWeb, "2-settings.yaml": diffSettings, "3-creds.yaml": diffCreds, "5-api.yaml": diffSame})
	if r := kapply(t, "apply", "-f", dir, "-n", ns); r.code != 0 {
		t.Fatalf("apply: exit %d: %s", r.code, r.stderr)
	}
	_, err := dynClient(t).Resource(deployments).Namespace(ns).Patch(context.Background(), "web", types.MergePatchType,
		[]byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{FieldManager: "kubectl-scale"}, "scale")
	if err != nil {
		t.Fatalf("scaling: %v", err)
	}
	writeFile(t, dir, "1-web.yaml", strings.Replace(diffWeb, "nginx:1.27", "nginx:1.28", 1))
	writeFile(t, dir, "2-settings.yaml", strings.Replace(diffSettings, `b: "2"`, `c: "3"`, 1))
	writeFile(t, dir, "3-creds.yaml", strings.Replace(diffCreds, "first-pass", "second-pass", 1))
	writeFile(t, dir, "4-new.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: new}\ndata: {k: v}\n")
	return dir, ns
}

// TestDiffGolden renders the scenario in every output format and compares
// with testdata/diff/cli-*.golden (volatile values normalized).
func TestDiffGolden(t *testing.T) {
	testcluster.Require(t, cluster)
	dir, ns := diffScenario(t)
	cases := []struct {
		golden string
		args   []string
	}{
		{"cli-unified.golden", []string{"--color=never"}},
		{"cli-color.golden", []string{"--color=always"}},
		{"cli-explain.golden", []string{"--explain"}},
		{"cli-summary.golden", []string{"--summary"}},
		{"cli-secret.golden", []string{"-f", filepath.Join(dir, "3-creds.yaml"), "--explain"}},
	}
	for _, tc := range cases {
		t.Run(tc.golden, func(t *testing.T) {
			args := append([]string{"diff", "-n", ns}, tc.args...)
			if !slices.Contains(tc.args, "-f") {
				args = append(args, "-f", dir)
			}
			r := kapply(t, args...)
			if r.code != exitDifferences {
				t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, exitDifferences, r.stderr)
			}
			compareGolden(t, tc.golden, normalize(r.stdout, dir, ns))
		})
	}
}

var (
	uidPattern  = regexp.MustCompile(`uid: [0-9a-f-]{36}`)
	timePattern = regexp.MustCompile(`creationTimestamp: "[^"]+"`)
)

// normalize replaces the values that change from run to run.
func normalize(out, dir, ns string) string {
	out = strings.ReplaceAll(out, dir, "DIR")
	out = strings.ReplaceAll(out, ns, "NS")
	out = uidPattern.ReplaceAllString(out, "uid: UID")
	return timePattern.ReplaceAllString(out, `creationTimestamp: "TIME"`)
}

func compareGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("..", "..", "testdata", "diff", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with -update to create it): %v", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run with -update to accept):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// TestDiffHidesNoiseAndSecrets: managedFields, resourceVersion, generation
// and the last-applied annotation show only with --show-managed; Secret
// values, plain or encoded, never show without --show-secrets, on stdout or
// stderr, nor in a client dry run.
func TestDiffHidesNoiseAndSecrets(t *testing.T) {
	testcluster.Require(t, cluster)
	dir, ns := diffScenario(t)
	noise := []string{"managedFields:", "resourceVersion:", "generation:", "last-applied-configuration", "kapply.dev/last-applied-compact"}
	secrets := []string{"first-pass", "second-pass", b64("first-pass"), b64("second-pass"), b64("admin")}
	for _, extra := range [][]string{nil, {"--local"}, {"--explain"}, {"--local", "--explain"}} {
		r := kapply(t, append([]string{"diff", "-f", dir, "-n", ns}, extra...)...)
		assertAbsent(t, fmt.Sprint(extra), r.stdout+r.stderr, append(noise, secrets...))
		if !strings.Contains(r.stdout, "'*** (after)'") {
			t.Errorf("%v: no masked change of the password:\n%s", extra, r.stdout)
		}
	}
	r := kapply(t, "diff", "-f", dir, "-n", ns, "--show-managed", "--show-secrets")
	for _, want := range []string{"managedFields:", "last-applied-configuration", b64("second-pass")} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("--show-managed --show-secrets: %q not shown:\n%s", want, r.stdout)
		}
	}
}

func assertClean(t *testing.T, dir, ns, mode string) {
	t.Helper()
	r := kapply(t, "diff", "-f", dir, "-n", ns, mode)
	if r.code != exitOK || r.stdout != "" {
		t.Errorf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", mode, r.code, r.stdout, r.stderr)
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func assertAbsent(t *testing.T, what, out string, forbidden []string) {
	t.Helper()
	for _, s := range forbidden {
		if strings.Contains(out, s) {
			t.Errorf("%s: output shows %q:\n%s", what, s, out)
		}
	}
}

// TestDiffAfterApplyIsClean: right after apply, diff finds nothing, by the
// server's dry run and locally.
func TestDiffAfterApplyIsClean(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"objects.yaml": createCases})
	if r := kapply(t, "apply", "-f", dir, "-n", ns); r.code != 0 {
		t.Fatalf("apply: exit %d: %s", r.code, r.stderr)
	}
	assertClean(t, dir, ns, "--dry-run=server")
	// A client dry run cannot know that the server drops an empty map
	// (the file's `data: {}`): that object is left out locally.
	writeFile(t, dir, "objects.yaml", strings.Replace(createCases, "data: {}\n", "", 1))
	assertClean(t, dir, ns, "--local")
	r := kapply(t, "diff", "-f", dir, "-n", ns, "--summary")
	if r.code != exitOK || strings.Count(r.stdout, "= ") != 5 {
		t.Errorf("--summary: exit %d\n%s", r.code, r.stdout)
	}
}

// TestDiffExitCodes: flag errors are 2; an object that fails makes the
// exit 2 even when others differ, and those others are still shown.
func TestDiffExitCodes(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{
		"good.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: good}\n",
		"unknown.yaml": "apiVersion: example.com/v1\nkind: Gizmo\nmetadata: {name: g}\n",
	})
	for _, args := range [][]string{
		{"diff"},
		{"diff", "-f", dir, "--color=rainbow"},
		{"diff", "-f", dir, "--dry-run=none"},
		{"diff", "-f", dir, "--no-such-flag"},
	} {
		if r := kapply(t, args...); r.code != exitError {
			t.Errorf("%v: exit %d, want %d", args, r.code, exitError)
		}
	}
	r := kapply(t, "diff", "-f", dir, "-n", ns)
	if r.code != exitError || !strings.Contains(r.stdout, "MERGED/v1.ConfigMap."+ns+".good") || !strings.Contains(r.stderr, "gizmo.example.com/g") {
		t.Errorf("mixed: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestDiffExternalProgram: KAPPLY_EXTERNAL_DIFF wins over
// KUBECTL_EXTERNAL_DIFF; the program sees LIVE and MERGED with kubectl's
// file names and masked Secrets; its status 1 is "differences", above 1 an
// error.
func TestDiffExternalProgram(t *testing.T) {
	testcluster.Require(t, cluster)
	dir, ns := diffScenario(t)
	t.Setenv(kapplyExternalDiff, script(t, `cd "$1/.." && find LIVE MERGED -type f | sort && cat "$2"/*; exit 1`))
	t.Setenv(kubectlExternalDiff, script(t, "exit 7"))
	r := kapply(t, "diff", "-f", dir, "-n", ns)
	// The unchanged Service too: the program is given every object, as by
	// kubectl, though the unified diff renders only those that differ.
	for _, want := range []string{"LIVE/apps.v1.Deployment." + ns + ".web", "MERGED/v1.ConfigMap." + ns + ".new", "MERGED/v1.Secret." + ns + ".creds",
		"LIVE/v1.Service." + ns + ".api", "MERGED/v1.Service." + ns + ".api"} {
		if !strings.Contains(r.stdout, want+"\n") {
			t.Errorf("the program did not see %s:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "LIVE/v1.ConfigMap."+ns+".new") {
		t.Errorf("a new object has a LIVE file:\n%s", r.stdout)
	}
	assertAbsent(t, "external", r.stdout, []string{b64("second-pass"), "managedFields:"})
	if r.code != exitDifferences {
		t.Errorf("exit %d, want %d: %s", r.code, exitDifferences, r.stderr)
	}
	t.Setenv(kapplyExternalDiff, "")
	if r := kapply(t, "diff", "-f", dir, "-n", ns); r.code != exitError {
		t.Errorf("KUBECTL_EXTERNAL_DIFF exiting 7: exit %d, want %d", r.code, exitError)
	}
}

func script(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "differ")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// agreementBase is what both tools start from; agreementNext is the files
// diffed, one scenario per object. The names of the objects that differ
// are the expected set.
var (
	agreementBase = map[string]string{
		"primitive.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: primitive}\ndata: {k: \"1\"}\n",
		"mapmerge.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: mapmerge, labels: {a: x}}\n",
		"removed.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: removed}\ndata: {k: v, gone: v}\n",
		"same.yaml":        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: same}\ndata: {k: v}\n",
		"listreplace.yaml": agreementDeployment("listreplace", `[{name: web, image: "nginx:1.27", args: ["a", "b"]}]`),
		"byname.yaml":      agreementDeployment("byname", `[{name: web, image: "nginx:1.27"}, {name: side, image: "busybox:1.36"}]`),
		"kept.yaml":        agreementDeployment("kept", `[{name: web, image: "nginx:1.27"}]`),
	}
	agreementNext = map[string]string{
		"primitive.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: primitive}\ndata: {k: \"2\"}\n",
		"mapmerge.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: mapmerge, labels: {a: x, c: z}}\n",
		"removed.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: removed}\ndata: {k: v}\n",
		"listreplace.yaml": agreementDeployment("listreplace", `[{name: web, image: "nginx:1.27", args: ["a", "c"]}]`),
		"byname.yaml":      agreementDeployment("byname", `[{name: web, image: "nginx:1.27"}, {name: side, image: "busybox:1.37"}]`),
		"new.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: new}\n",
		"same.yaml":        agreementBase["same.yaml"],
		"kept.yaml":        agreementBase["kept.yaml"],
	}
	agreementDiffer = []string{"apps.v1.Deployment.NS.byname", "apps.v1.Deployment.NS.listreplace",
		"v1.ConfigMap.NS.mapmerge", "v1.ConfigMap.NS.new", "v1.ConfigMap.NS.primitive", "v1.ConfigMap.NS.removed"}
)

func agreementDeployment(name, containers string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s}
spec:
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec: {containers: %[2]s}
`, name, containers)
}

// TestDiffAgreesWithKubectl: over the scenarios, kapply diff (by the
// server's dry run and locally) and kubectl diff name the same objects.
// Other writers add a label and scale a Deployment the file leaves alone.
func TestDiffAgreesWithKubectl(t *testing.T) {
	testcluster.Require(t, cluster)
	testcluster.Kubectl(t)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, agreementBase)
	if r := kapply(t, "apply", "-f", dir, "-n", ns); r.code != 0 {
		t.Fatalf("apply: exit %d: %s", r.code, r.stderr)
	}
	otherWriters(t, ns)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	dir = writeFiles(t, agreementNext)
	theirs := kubectlDiffNames(t, dir, ns)
	for _, mode := range []string{"--dry-run=server", "--local"} {
		r := kapply(t, "diff", "-f", dir, "-n", ns, mode, "--parallel", "3")
		ours := diffNames(r.stdout, ns)
		if r.code != exitDifferences || !slices.Equal(ours, theirs) || !slices.Equal(ours, agreementDiffer) {
			t.Errorf("%s: exit %d\n kapply: %q\nkubectl: %q\n   want: %q\nstderr: %s", mode, r.code, ours, theirs, agreementDiffer, r.stderr)
		}
	}
}

// otherWriters changes what the files do not manage: a label on mapmerge,
// the replicas of kept.
func otherWriters(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	if _, err := dynClient(t).Resource(configMaps).Namespace(ns).Patch(ctx, "mapmerge", types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"b":"y"}}}`), metav1.PatchOptions{FieldManager: "other"}); err != nil {
		t.Fatal(err)
	}
	if _, err := dynClient(t).Resource(deployments).Namespace(ns).Patch(ctx, "kept", types.MergePatchType,
		[]byte(`{"spec":{"replicas":4}}`), metav1.PatchOptions{FieldManager: "kubectl-scale"}, "scale"); err != nil {
		t.Fatal(err)
	}
}

// kubectlDiffNames runs kubectl diff, which exits 1 on differences.
func kubectlDiffNames(t *testing.T, dir, ns string) []string {
	t.Helper()
	cmd := exec.Command("kubectl", "diff", "-f", dir, "-n", ns, "--kubeconfig", cluster.Kubeconfig)
	cmd.Env = append(os.Environ(), "KUBECTL_EXTERNAL_DIFF=")
	out, err := cmd.Output()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("kubectl diff: %v\n%s", err, out)
	}
	return diffNames(string(out), ns)
}

// diffNames collects, sorted, the object file names of the `diff -u -N`
// header lines, the namespace replaced by NS.
func diffNames(out, ns string) []string {
	var names []string
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 5 && fields[0] == "diff" && fields[1] == "-u" {
			names = append(names, strings.ReplaceAll(filepath.Base(fields[4]), ns, "NS"))
		}
	}
	slices.Sort(names)
	return names
}
