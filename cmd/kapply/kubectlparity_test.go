package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"

	"github.com/kapply/kapply/internal/fixture"
	"github.com/kapply/kapply/internal/testcluster"
	kcluster "github.com/kapply/kapply/pkg/cluster"
)

// waitServed waits until the server's discovery lists resource in
// groupVersion: a new CRD's kind is served some time after its creation,
// and a later run (a new process) maps kinds by discovery.
func waitServed(t *testing.T, groupVersion, resource string) {
	t.Helper()
	client, err := discovery.NewDiscoveryClientForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		list, err := client.ServerResourcesForGroupVersion(groupVersion)
		return err == nil && slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == resource }), nil
	})
	if err != nil {
		t.Fatalf("%s of %s not served: %v", resource, groupVersion, err)
	}
}

// kubectlRun runs kubectl on the test cluster with stdin and returns what
// it printed and its exit code, failing the test only if it cannot run.
func kubectlRun(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command("kubectl", append(args, "--kubeconfig", cluster.Kubeconfig)...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return result{stdout: out.String(), stderr: errOut.String(), code: exit.ExitCode()}
	case err != nil:
		t.Fatalf("kubectl %s: %v", strings.Join(args, " "), err)
	}
	return result{stdout: out.String(), stderr: errOut.String()}
}

func configMapExists(t *testing.T, ns, name string) bool {
	t.Helper()
	_, err := dynClient(t).Resource(configMaps).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

// TestStaleResourceVersionRefusedAsKubectl: a file that sets
// metadata.resourceVersion is patched with it, as kubectl does: once the
// object has changed since, the server's conflict is the answer, the object
// keeps its newer state, and kapply sends one patch (no re-plan, which could
// only conflict again). With the live resourceVersion, the file applies.
func TestStaleResourceVersionRefusedAsKubectl(t *testing.T) {
	testcluster.Require(t, cluster)
	requireKubectl(t)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {a: \"1\"}\n"})
	mustApply(t, dir, ns, "configmap/cm created\n")
	cms := dynClient(t).Resource(configMaps).Namespace(ns)
	live, err := cms.Get(context.Background(), "cm", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stale := live.GetResourceVersion()
	if _, err := cms.Patch(context.Background(), "cm", types.MergePatchType, []byte(`{"data":{"b":"other writer"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	file := func(rv string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, resourceVersion: %q}\ndata: {a: \"2\"}\n", rv)
	}
	writeFile(t, dir, "cm.yaml", file(stale))
	path := filepath.Join(dir, "cm.yaml")

	r := kapply(t, "apply", "-f", dir, "-n", ns, "-v=6")
	wantParts := []string{"configmap/cm", path, "Operation cannot be fulfilled", fmt.Sprintf("metadata.resourceVersion %q", stale)}
	if r.code != exitFailed || !errorLineHasAll(r.stderr, wantParts) {
		t.Errorf("stale file: exit %d, want %d and an error line with %q:\n%s", r.code, exitFailed, wantParts, r.stderr)
	}
	if n := strings.Count(r.stderr, `verb="PATCH"`); n != 1 {
		t.Errorf("%d PATCH requests, want 1", n)
	}
	assertData(t, cms, "cm", map[string]any{"a": "1", "b": "other writer"})

	theirs := kubectlRun(t, "", "apply", "-f", dir, "-n", ns)
	if theirs.code != 1 || !strings.Contains(theirs.stderr, "Operation cannot be fulfilled") {
		t.Errorf("kubectl: exit %d\n%s", theirs.code, theirs.stderr)
	}
	assertData(t, cms, "cm", map[string]any{"a": "1", "b": "other writer"})

	live, err = cms.Get(context.Background(), "cm", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "cm.yaml", file(live.GetResourceVersion()))
	mustApply(t, dir, ns, "configmap/cm configured\n")
	assertData(t, cms, "cm", map[string]any{"a": "2", "b": "other writer"})
}

// badDeployment misspells spec.replicas and a container's imagePullPolicy.
const badDeployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: %s}
spec:
  replica: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx, imagePullPolcy: Always}]
`

// TestValidateAsKubectl: --validate=strict (the default) refuses unknown
// fields with the server's message, naming the object and the file, on
// create, on patch and server-side; warn applies and prints the server's
// warnings; ignore (and false) applies silently. kubectl does each alike.
func TestValidateAsKubectl(t *testing.T) {
	testcluster.Require(t, cluster)
	requireKubectl(t)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{
		"ours.yaml":   fmt.Sprintf(badDeployment, "ours"),
		"theirs.yaml": fmt.Sprintf(badDeployment, "theirs"),
	})
	ours, theirs := filepath.Join(dir, "ours.yaml"), filepath.Join(dir, "theirs.yaml")
	unknown := []string{`unknown field "spec.replica"`, `unknown field "spec.template.spec.containers[0].imagePullPolcy"`}
	both := func(what string, args []string, wantCode int, wantStderr []string) {
		t.Helper()
		r := kapply(t, append([]string{"apply", "-f", ours, "-n", ns}, args...)...)
		k := kubectlRun(t, "", append([]string{"apply", "-f", theirs, "-n", ns}, args...)...)
		if r.code != wantCode || k.code != wantCode {
			t.Errorf("%s: kapply exit %d, kubectl exit %d, want %d\nkapply: %s\nkubectl: %s", what, r.code, k.code, wantCode, r.stderr, k.stderr)
		}
		for _, part := range wantStderr {
			if !strings.Contains(r.stderr, part) || !strings.Contains(k.stderr, part) {
				t.Errorf("%s: %q missing\nkapply: %s\nkubectl: %s", what, part, r.stderr, k.stderr)
			}
		}
		if wantCode == exitFailed && !errorLineHasAll(r.stderr, []string{"deployment.apps/ours", ours}) {
			t.Errorf("%s: no error line naming the object and the file:\n%s", what, r.stderr)
		}
	}
	both("strict create", nil, exitFailed, unknown)
	both("server-side strict create", []string{"--server-side"}, exitFailed, []string{".spec.replica: field not declared in schema"})
	if exists(t, deployments, ns, "ours") {
		t.Fatal("a refused object exists")
	}
	both("warn create", []string{"--validate=warn"}, 0, append([]string{"Warning: "}, unknown...))
	both("strict patch", []string{"--validate=true"}, exitFailed, unknown)
	both("warn patch", []string{"--validate=warn"}, 0, unknown)
	both("ignore patch", []string{"--validate=false"}, 0, nil)
	if r := kapply(t, "apply", "-f", ours, "-n", ns, "--validate=ignore"); strings.Contains(r.stderr, "unknown field") {
		t.Errorf("--validate=ignore printed warnings:\n%s", r.stderr)
	}
	if r := kapply(t, "apply", "-f", ours, "-n", ns, "--validate=sometimes"); r.code != exitFailed ||
		!strings.Contains(r.stderr, `invalid - validate option "sometimes"; must be one of: strict (or true), warn, ignore (or false)`) {
		t.Errorf("bad --validate: exit %d\n%s", r.code, r.stderr)
	}
}

// TestEmptyInputAsKubectl: a file with only "---", an empty file and an
// empty stdin are kubectl's "no objects passed to apply", exit 1; diff
// prints nothing and exits 0, as kubectl diff.
func TestEmptyInputAsKubectl(t *testing.T) {
	testcluster.Require(t, cluster)
	requireKubectl(t)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"separator.yaml": "---\n", "empty.yaml": ""})
	for _, file := range []string{filepath.Join(dir, "separator.yaml"), filepath.Join(dir, "empty.yaml"), "-"} {
		for _, command := range []string{"apply", "diff"} {
			r := kapply(t, command, "-f", file, "-n", ns)
			k := kubectlRun(t, "", command, "-f", file, "-n", ns)
			if r.code != k.code || r.stdout != k.stdout || r.stderr != k.stderr {
				t.Errorf("%s -f %s: kapply exit %d %q %q, kubectl exit %d %q %q", command, file, r.code, r.stdout, r.stderr, k.code, k.stdout, k.stderr)
			}
		}
	}
	if r := kapply(t, "apply", "-f", filepath.Join(dir, "empty.yaml"), "-n", ns); r.code != 1 || r.stderr != "error: no objects passed to apply\n" {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestMissingAPIVersionOrKind: an object without apiVersion or kind fails
// with kubectl's words, naming its file, and is not created; the others
// are; the exit code is 1, as kubectl's.
func TestMissingAPIVersionOrKind(t *testing.T) {
	testcluster.Require(t, cluster)
	requireKubectl(t)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{
		"a-noapi.yaml":  "kind: ConfigMap\nmetadata: {name: noapi}\n",
		"b-nokind.yaml": "apiVersion: v1\nmetadata: {name: nokind}\n",
		"c-good.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: good}\n",
	})
	r := kapply(t, "apply", "-f", dir, "-n", ns)
	if r.code != exitFailed || r.stdout != "configmap/good created\n" {
		t.Errorf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		fmt.Sprintf("error: error validating %q: error validating data: apiVersion not set\n", filepath.Join(dir, "a-noapi.yaml")),
		fmt.Sprintf("error: unable to decode %q: Object 'Kind' is missing", filepath.Join(dir, "b-nokind.yaml")),
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if configMapExists(t, ns, "noapi") {
		t.Error("the object without apiVersion was created")
	}
	k := kubectlRun(t, "", "apply", "-f", dir, "-n", ns)
	if k.code != r.code || !strings.Contains(k.stderr, "apiVersion not set") || !strings.Contains(k.stderr, "kind not set") {
		t.Errorf("kubectl: exit %d\n%s", k.code, k.stderr)
	}
}

// TestSameObjectTwice: one object declared in two documents fails, naming
// both files and documents, and neither copy is applied; the other objects
// are; exit 1. kubectl applies both in turn, the last one winning.
func TestSameObjectTwice(t *testing.T) {
	testcluster.Require(t, cluster)
	requireKubectl(t)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{
		"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: twice}\ndata: {v: \"1\"}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: first}\n",
		"b.yaml": fmt.Sprintf("---\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: second}\n---\n# the same object, namespace written\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: twice, namespace: %s}\ndata: {v: \"2\"}\n", ns),
	})
	r := kapply(t, "apply", "-f", dir, "-n", ns)
	if r.code != exitFailed || r.stdout != "configmap/first created\nconfigmap/second created\n" {
		t.Errorf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	want := fmt.Sprintf("declared 2 times, in %s (document 1) and %s (document 2): none of them is applied",
		filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml"))
	if n := strings.Count(r.stderr, want); n != 2 {
		t.Errorf("%d errors with %q, want one per copy:\n%s", n, want, r.stderr)
	}
	if configMapExists(t, ns, "twice") {
		t.Error("a copy was applied")
	}
	kubectl(t, "apply", "-f", dir, "-n", ns)
	assertData(t, dynClient(t).Resource(configMaps).Namespace(ns), "twice", map[string]any{"v": "2"})
}

// TestVerbosityLogsRequests: -v=6 logs each request (method and URL) on
// stderr, stdout stays kubectl's; Secret values never reach the log at -v=7;
// -v=8, which logs bodies, needs --log-bodies. Without -v, klog prints
// nothing.
func TestVerbosityLogsRequests(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	const password = "hunter2-not-in-logs"
	dir := writeFiles(t, map[string]string{
		"cm.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n",
		"secret.yaml": fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {password: %s}\n", password),
	})
	r := kapply(t, "apply", "-f", filepath.Join(dir, "cm.yaml"), "-n", ns, "-v=6")
	wantURL := fmt.Sprintf(`verb="GET" url="%s/api/v1/namespaces/%s/configmaps/cm"`, strings.TrimSuffix(cluster.Config.Host, "/"), ns)
	if r.code != 0 || r.stdout != "configmap/cm created\n" || !strings.Contains(r.stderr, wantURL) || !strings.Contains(r.stderr, `verb="POST"`) {
		t.Errorf("-v=6: exit %d\nstdout %q\nstderr lacks %s:\n%s", r.code, r.stdout, wantURL, r.stderr)
	}
	if r := kapply(t, "apply", "-f", filepath.Join(dir, "cm.yaml"), "-n", ns); strings.Contains(r.stderr, "round_trippers") {
		t.Errorf("without -v, klog printed:\n%s", r.stderr)
	}
	encoded := base64.StdEncoding.EncodeToString([]byte(password))
	for _, args := range [][]string{{"-v=7"}, {"--v", "7"}} {
		r := kapply(t, append([]string{"apply", "-f", filepath.Join(dir, "secret.yaml"), "-n", ns}, args...)...)
		if r.code != 0 || !strings.Contains(r.stderr, "/secrets/s") || strings.Contains(r.stderr, password) || strings.Contains(r.stderr, encoded) {
			t.Errorf("%v: exit %d; the log must show the request and no Secret value:\n%s", args, r.code, r.stderr)
		}
	}
	r = kapply(t, "apply", "-f", filepath.Join(dir, "secret.yaml"), "-n", ns, "-v=8")
	if r.code != exitError || r.stdout != "" || !strings.Contains(r.stderr, "pass --log-bodies") || strings.Contains(r.stderr, encoded) {
		t.Errorf("-v=8: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := kapply(t, "apply", "-f", filepath.Join(dir, "secret.yaml"), "-n", ns, "-v=8", "--log-bodies"); r.code != 0 {
		t.Errorf("-v=8 --log-bodies: exit %d\n%s", r.code, r.stderr)
	}
}

// TestBareDryRunAsKubectl: a bare --dry-run, and --dry-run=true, are a
// client dry run with kubectl's deprecation warning; nothing is created.
func TestBareDryRunAsKubectl(t *testing.T) {
	testcluster.Require(t, cluster)
	requireKubectl(t)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n"})
	for _, flag := range []string{"--dry-run", "--dry-run=true"} {
		r := kapply(t, "apply", "-f", dir, "-n", ns, flag)
		k := kubectlRun(t, "", "apply", "-f", dir, "-n", ns, flag)
		if r.code != 0 || r.stdout != k.stdout || !strings.Contains(r.stderr, "deprecated") || !strings.Contains(r.stderr, "can be replaced with --dry-run=client.") {
			t.Errorf("%s: exit %d\nkapply %q, kubectl %q\n%s", flag, r.code, r.stdout, k.stdout, r.stderr)
		}
	}
	if configMapExists(t, ns, "cm") {
		t.Error("a dry run created the object")
	}
	r := kapply(t, "apply", "-f", dir, "-n", ns, "--dry-run=later")
	if r.code != exitFailed || !strings.Contains(r.stderr, `Invalid dry-run value (later). Must be "none", "server", or "client".`) {
		t.Errorf("--dry-run=later: exit %d\n%s", r.code, r.stderr)
	}
}

// TestParseDryRunAsKubectl: the values kubectl's GetDryRunStrategy takes,
// for every command that has --dry-run.
func TestParseDryRunAsKubectl(t *testing.T) {
	for value, want := range map[string]kcluster.DryRun{
		"": kcluster.NoDryRun, "none": kcluster.NoDryRun, "false": kcluster.NoDryRun,
		"client": kcluster.ClientDryRun, "unchanged": kcluster.ClientDryRun, "true": kcluster.ClientDryRun, "1": kcluster.ClientDryRun,
		"server": kcluster.ServerDryRun,
	} {
		if got, err := parseDryRun(value); err != nil || got != want {
			t.Errorf("parseDryRun(%q) = %v, %v; want %v", value, got, err, want)
		}
	}
	if _, err := parseDryRun("all"); err == nil {
		t.Error("parseDryRun(all) gave no error")
	}
}

// TestValidateCustomResourceAsKubectl: an unknown field of a custom resource
// (its CRD's structural schema) is refused in the merge patch as in the
// create, with the server's words and without the object it quotes; kubectl
// refuses it too.
func TestValidateCustomResourceAsKubectl(t *testing.T) {
	testcluster.Require(t, cluster)
	requireKubectl(t)
	ns := cluster.Namespace(t)
	group := "validate.example.com"
	widget := func(spec string) string { return fixture.Widget(group, "", "w", spec) }
	dir := writeFiles(t, map[string]string{"crd.yaml": fixture.WidgetCRD(group)})
	if r := kapply(t, "apply", "-f", dir); r.code != 0 {
		t.Fatalf("CRD: exit %d\n%s", r.code, r.stderr)
	}
	waitServed(t, group+"/v1", "widgets")
	files := writeFiles(t, map[string]string{"w.yaml": widget("size: 1, colour: red")})
	path := filepath.Join(files, "w.yaml")
	r := kapply(t, "apply", "-f", files, "-n", ns)
	if r.code != exitFailed || !errorLineHasAll(r.stderr, []string{"widget." + group + "/w", path, `unknown field "spec.colour"`}) {
		t.Errorf("create: exit %d\n%s", r.code, r.stderr)
	}
	writeFile(t, files, "w.yaml", widget("size: 1"))
	mustApply(t, files, ns, "widget."+group+"/w created\n")
	writeFile(t, files, "w.yaml", widget("size: 2, colour: red"))
	r = kapply(t, "apply", "-f", files, "-n", ns)
	want := []string{path, `patching: the request is invalid: patch: strict decoding error: unknown field "spec.colour"`}
	if r.code != exitFailed || !errorLineHasAll(r.stderr, want) || strings.Contains(r.stderr, "managedFields") {
		t.Errorf("patch: exit %d, want an error line with %q and no quoted object:\n%s", r.code, want, r.stderr)
	}
	if k := kubectlRun(t, "", "apply", "-f", files, "-n", ns); k.code != 1 || !strings.Contains(k.stderr, `unknown field "spec.colour"`) {
		t.Errorf("kubectl: exit %d\n%s", k.code, k.stderr)
	}
}
