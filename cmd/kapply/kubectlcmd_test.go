package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kapply/kapply/internal/testcluster"
)

// These are the behaviours kubectl's own command tests (test/cmd apply.sh
// and apps.sh, run with kapply in kubectl's place by hack/kubectlcmd)
// check, each on the real API server.

var pods = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

const kubectlcmdPod = `apiVersion: v1
kind: Pod
metadata:
  name: %s
  labels: {name: %s}
spec:
  containers:
  - name: pause
    image: registry.k8s.io/pause:3.10.1
`

func podFile(name, label string) string {
	return strings.ReplaceAll(strings.Replace(kubectlcmdPod, "%s", name, 1), "%s", label)
}

// TestPruneAllAsKubectl: --prune without -l is refused in kubectl's words
// unless --all says "every object"; --all and -l together are refused.
func TestPruneAllAsKubectl(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"a.yaml": labelledConfigMap("a", "app: x", "k: v"), "b.yaml": labelledConfigMap("b", "app: x", "k: v")})
	mustApply(t, dir, ns, "configmap/a created\nconfigmap/b created\n")

	only := filepath.Join(dir, "b.yaml")
	r := kapply(t, "apply", "--prune", "-f", only, "-n", ns)
	if want := "all resources selected for prune without explicitly passing --all"; r.code == 0 || !strings.Contains(r.stderr, want) {
		t.Fatalf("--prune without -l or --all: exit %d, want an error with %q\n%s", r.code, want, r.stderr)
	}
	if r := kapply(t, "apply", "--prune", "--all", "-l", "app=x", "-f", only, "-n", ns); r.code == 0 || !strings.Contains(r.stderr, "cannot set --all and --selector at the same time") {
		t.Fatalf("--all with -l: exit %d\n%s", r.code, r.stderr)
	}
	if r := kapply(t, "apply", "--prune", "--all", "-f", only, "-n", ns); r.code != 0 || !strings.Contains(r.stdout, "configmap/a pruned") {
		t.Fatalf("--prune --all: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := dynClient(t).Resource(configMaps).Namespace(ns).Get(context.Background(), "b", metav1.GetOptions{}); err != nil {
		t.Errorf("b, still in the files, is gone: %v", err)
	}
}

// TestNamespaceMismatchAsKubectl: an object whose namespace contradicts -n
// is refused with cli-runtime's sentence, which scripts match.
func TestNamespaceMismatchAsKubectl(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: elsewhere}\n"})
	r := kapply(t, "apply", "-f", dir, "-n", ns)
	want := `the namespace from the provided object "elsewhere" does not match the namespace "` + ns + `". You must pass '--namespace=elsewhere' to perform this operation.`
	if r.code == 0 || !strings.Contains(r.stderr, want) {
		t.Errorf("exit %d, want an error with %q\n%s", r.code, want, r.stderr)
	}
}

// TestServerErrorsAsKubectl: an Invalid object is "The Pod "x" is
// invalid", another API error starts "Error from server (Reason): ".
func TestServerErrorsAsKubectl(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"bad.yaml": podFile("POD-B", "b")})
	r := kapply(t, "apply", "-f", dir, "-n", ns)
	if want := `The Pod "POD-B" is invalid`; r.code != exitFailed || !strings.Contains(r.stderr, want) {
		t.Errorf("invalid pod: exit %d, want %q\n%s", r.code, want, r.stderr)
	}

	dir = writeFiles(t, map[string]string{"cm.yaml": labelledConfigMap("cm", "app: x", "k: v")})
	mustApply(t, dir, ns, "configmap/cm created\n")
	writeFile(t, dir, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, resourceVersion: \"1\"}\ndata: {k: v2}\n")
	r = kapply(t, "apply", "-f", dir, "-n", ns)
	if want := "Error from server (Conflict): configmap/cm"; r.code != exitFailed || !strings.Contains(r.stderr, want) {
		t.Errorf("stale resourceVersion: exit %d, want %q\n%s", r.code, want, r.stderr)
	}
}

// TestServerSideAsKubectl: --server-side prints kubectl's
// "serverside-applied"; --subresource=status applies the status; a field
// manager of the user's own gets the conflict kubectl gets on fields
// client-side apply set, while the same values migrate as kubectl's do.
func TestServerSideAsKubectl(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"pod.yaml": podFile("p", "one")})
	if r := kapply(t, "apply", "--server-side", "-f", dir, "-n", ns); r.code != 0 || r.stdout != "pod/p serverside-applied\n" || !strings.Contains(r.stderr, "1 created") {
		t.Fatalf("create: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := kapply(t, "apply", "--server-side", "--dry-run=server", "-f", dir, "-n", ns); r.code != 0 || r.stdout != "pod/p serverside-applied (server dry run)\n" {
		t.Fatalf("dry run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	status := writeFiles(t, map[string]string{"status.yaml": `apiVersion: v1
kind: Pod
metadata: {name: p}
status:
  conditions:
  - {type: example.io/Foo, status: "True"}
`})
	if r := kapply(t, "apply", "--subresource=status", "-f", status, "-n", ns); r.code == 0 || !strings.Contains(r.stderr, "--subresource can only be specified for --server-side") {
		t.Fatalf("--subresource without --server-side: exit %d\n%s", r.code, r.stderr)
	}
	if r := kapply(t, "apply", "--server-side", "--subresource=status", "--field-manager=cond", "-f", status, "-n", ns); r.code != 0 {
		t.Fatalf("--subresource=status: exit %d\n%s", r.code, r.stderr)
	}
	live := liveObject(t, pods, ns, "p")
	conditions, _, _ := unstructured.NestedSlice(live.Object, "status", "conditions")
	if len(conditions) != 1 || conditions[0].(map[string]any)["type"] != "example.io/Foo" {
		t.Errorf("status.conditions %v, want the applied one", conditions)
	}

	cms := writeFiles(t, map[string]string{"cm.yaml": labelledConfigMap("cm", "name: one", "k: v")})
	mustApply(t, cms, ns, "configmap/cm created\n")
	writeFile(t, cms, "cm.yaml", labelledConfigMap("cm", "name: two", "k: v"))
	if r := kapply(t, "apply", "--server-side", "--field-manager=not-kubectl", "-f", cms, "-n", ns); r.code != exitFailed || !strings.Contains(r.stderr, "kubectl-client-side-apply") {
		t.Errorf("another manager over client-side fields: exit %d, want %d and a conflict\n%s", r.code, exitFailed, r.stderr)
	}
	if got := liveLabels(t, ns, "cm"); got != "name=one" {
		t.Errorf("labels %s after the conflict, want name=one", got)
	}

	mine := writeFiles(t, map[string]string{"cm.yaml": labelledConfigMap("mine", "", "key: value1, legacy: value2")})
	if r := kapply(t, "apply", "--field-manager=myfm", "-f", mine, "-n", ns); r.code != 0 {
		t.Fatalf("client-side as myfm: exit %d\n%s", r.code, r.stderr)
	}
	if r := kapply(t, "apply", "--server-side", "--field-manager=myfm", "-f", mine, "-n", ns); r.code != 0 {
		t.Fatalf("server-side as myfm, same values: exit %d\n%s", r.code, r.stderr)
	}
	writeFile(t, mine, "cm.yaml", labelledConfigMap("mine", "", "key: value2"))
	if r := kapply(t, "apply", "--server-side", "--field-manager=myfm", "-f", mine, "-n", ns); r.code != 0 {
		t.Fatalf("server-side as myfm, legacy dropped: exit %d\n%s", r.code, r.stderr)
	}
	data, _, _ := unstructured.NestedMap(liveObject(t, configMaps, ns, "mine").Object, "data")
	if len(data) != 1 || data["key"] != "value2" {
		t.Errorf("data %v, want only key: value2", data)
	}
}

// TestMatchServerVersion: kubectl's --match-server-version, against the
// Kubernetes minor kapply is built for.
func TestMatchServerVersion(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"cm.yaml": labelledConfigMap("cm", "app: x", "k: v")})
	if r := kapply(t, "apply", "--match-server-version", "-f", dir, "-n", ns); r.code != 0 {
		t.Fatalf("same minor: exit %d\n%s", r.code, r.stderr)
	}

	old := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/version" {
			http.Error(w, apierrors.NewNotFound(schema.GroupResource{}, req.URL.Path).Error(), http.StatusNotFound)
			return
		}
		_, _ = w.Write([]byte(`{"major": "1", "minor": "20", "gitVersion": "v1.20.0"}`))
	}))
	defer old.Close()
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: bytes.NewReader(nil), Out: &out, ErrOut: &errOut}
	code := exitCode(run([]string{"apply", "--match-server-version", "-s", old.URL, "-f", dir}, streams), &errOut)
	if code != exitError || !strings.Contains(errOut.String(), "server version (v1.20.0) differs from client version") {
		t.Errorf("older server: exit %d\n%s", code, errOut.String())
	}
}
