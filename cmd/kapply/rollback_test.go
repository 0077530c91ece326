package main

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapply/kapply/internal/testcluster"
)

var (
	rollbackDeployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	rollbackConfigMaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	rollbackJobs        = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
)

func rollbackDeployment(image string) string {
	return `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: app
        image: ` + image + "\n"
}

const rollbackSecret = "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\nstringData: {password: hunter2-rollback}\n"

// writeTree replaces dir's files with files.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func getObject(t *testing.T, gvr schema.GroupVersionResource, ns, name string) *unstructured.Unstructured {
	t.Helper()
	obj, err := dynClient(t).Resource(gvr).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("%s %s/%s: %v", gvr.Resource, ns, name, err)
	}
	return obj
}

func absent(t *testing.T, gvr schema.GroupVersionResource, ns, name string) bool {
	t.Helper()
	_, err := dynClient(t).Resource(gvr).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	return err != nil && strings.Contains(err.Error(), "not found")
}

// TestRollbackBringsTheSetBackKeepingOtherWriters: v1, then other writers
// (an autoscaler's replicas, an injected sidecar), then v2 (an image and
// a value changed, an object added, one removed). A rollback without the
// revision's Secret is refused naming it, with nothing written; with it
// (-f), the image and the value come back, the added object is pruned,
// the removed one created again, the replicas and the sidecar stay, and
// the rollback is revision 3 with its cause. A second rollback (default:
// the revision before the newest) goes back to v2.
func TestRollbackBringsTheSetBackKeepingOtherWriters(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	ctx := context.Background()
	dir := t.TempDir()
	secretDir := writeFiles(t, map[string]string{"creds.yaml": rollbackSecret})
	applyArgs := []string{"apply", "-f", dir, "-n", ns, "--prune", "--applyset=web"}
	writeTree(t, dir, map[string]string{"web.yaml": rollbackDeployment("nginx:1"), "creds.yaml": rollbackSecret,
		"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: one}\n",
		"b.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata: {k: b}\n"})
	mustKapply(t, append(applyArgs, "--change-cause", "v1")...)

	// Other writers: an autoscaler's replicas, an injector's sidecar.
	if _, err := dynClient(t).Resource(rollbackDeployments).Namespace(ns).Patch(ctx, "web", types.StrategicMergePatchType,
		[]byte(`{"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"sidecar","image":"proxy:1"}]}}}}`),
		metav1.PatchOptions{FieldManager: "autoscaler"}); err != nil {
		t.Fatal(err)
	}

	writeTree(t, dir, map[string]string{"web.yaml": rollbackDeployment("nginx:2"), "creds.yaml": rollbackSecret,
		"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: two}\n",
		"c.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {k: c}\n"})
	mustKapply(t, append(applyArgs, "--change-cause", "v2")...)

	refused := kapply(t, "rollback", "--applyset=web", "-n", ns)
	if refused.code != 1 || !strings.Contains(refused.stderr, "Secret "+ns+"/creds") || !strings.Contains(refused.stderr, "-f") {
		t.Fatalf("a rollback without the Secret's values: want exit 1 naming Secret %s/creds, got %d\n%s%s", ns, refused.code, refused.stdout, refused.stderr)
	}
	if got := getObject(t, rollbackConfigMaps, ns, "a").Object["data"].(map[string]any)["k"]; got != "two" {
		t.Fatalf("the refused rollback wrote: a has k=%v", got)
	}
	notSecret := kapply(t, "rollback", "--applyset=web", "-n", ns, "-f", secretDir, "-f", filepath.Join(dir, "a.yaml"))
	if notSecret.code != 1 || !strings.Contains(notSecret.stderr, "ConfigMap "+ns+"/a") {
		t.Fatalf("-f with a ConfigMap: want exit 1 naming it, got %d\n%s", notSecret.code, notSecret.stderr)
	}

	out := mustKapply(t, "rollback", "--applyset=web", "-n", ns, "-f", secretDir)
	for _, want := range []string{"deployment.apps/web configured", "configmap/a configured", "configmap/b created", "configmap/c pruned"} {
		if !strings.Contains(out.stdout, want) {
			t.Errorf("rollback output lacks %q:\n%s", want, out.stdout)
		}
	}
	web := getObject(t, rollbackDeployments, ns, "web")
	containers, _, _ := unstructured.NestedSlice(web.Object, "spec", "template", "spec", "containers")
	images := map[string]any{}
	for _, c := range containers {
		images[c.(map[string]any)["name"].(string)] = c.(map[string]any)["image"]
	}
	if images["app"] != "nginx:1" || images["sidecar"] != "proxy:1" || len(images) != 2 {
		t.Errorf("containers after the rollback: %v, want app nginx:1 and the injected sidecar kept", images)
	}
	if replicas, _, _ := unstructured.NestedInt64(web.Object, "spec", "replicas"); replicas != 3 {
		t.Errorf("replicas %d after the rollback, want the autoscaler's 3", replicas)
	}
	if got := getObject(t, rollbackConfigMaps, ns, "a").Object["data"].(map[string]any)["k"]; got != "one" {
		t.Errorf("a has k=%v after the rollback, want one", got)
	}
	getObject(t, rollbackConfigMaps, ns, "b")
	if !absent(t, rollbackConfigMaps, ns, "c") {
		t.Error("c, added after revision 1, is still there")
	}
	list := mustKapply(t, "history", "--applyset=web", "-n", ns).stdout
	rows := strings.Split(strings.TrimSpace(list), "\n")
	if got := strings.Join(strings.Fields(rows[len(rows)-1])[2:], " "); len(rows) != 4 ||
		got != `admin kubectl-client-side-apply 4 1 2 1 true "rollback to revision 1"` {
		t.Errorf("the rollback is not revision 3 (b added, web and a changed, c removed) with its manager and cause:\n%s", list)
	}

	// The default is the revision before the newest: v2 again.
	mustKapply(t, "rollback", "--applyset=web", "-n", ns, "-f", secretDir)
	if got := getObject(t, rollbackConfigMaps, ns, "a").Object["data"].(map[string]any)["k"]; got != "two" {
		t.Errorf("a second rollback: a has k=%v, want two (revision 2)", got)
	}
	if !absent(t, rollbackConfigMaps, ns, "b") {
		t.Error("a second rollback: b, removed in revision 2, is still there")
	}
}

// TestRollbackSavedPlanNeedsOnlyTheSecrets: rollback -o saves the plan
// and writes nothing, holding no Secret value given with -f (plain or
// base64); apply --plan executes it with only the Secret's file (the
// other objects are read again from the history), refusing it without;
// the Secret gets the value given back. A plan whose revision is gone
// from the history is refused.
func TestRollbackSavedPlanNeedsOnlyTheSecrets(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := t.TempDir()
	secret := func(password string) string {
		return "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\nstringData: {password: " + password + "}\n"
	}
	const oldPassword = "old-pass-6f1e2d"
	oldSecretDir := writeFiles(t, map[string]string{"creds.yaml": secret(oldPassword)})
	applyArgs := []string{"apply", "-f", dir, "-n", ns, "--prune", "--applyset=web"}
	writeTree(t, dir, map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: one}\n", "creds.yaml": secret(oldPassword)})
	mustKapply(t, applyArgs...)
	writeTree(t, dir, map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: two}\n", "creds.yaml": secret("new-pass-9a8b7c")})
	mustKapply(t, applyArgs...)

	planFile := filepath.Join(t.TempDir(), "rollback.json")
	saved := mustKapply(t, "rollback", "--applyset=web", "-n", ns, "-o", planFile, "-f", oldSecretDir)
	if !strings.Contains(saved.stdout, "data.k") || !strings.Contains(saved.stdout, "2 to patch") {
		t.Errorf("the saved rollback's table does not patch a and creds:\n%s", saved.stdout)
	}
	if got := getObject(t, rollbackConfigMaps, ns, "a").Object["data"].(map[string]any)["k"]; got != "two" {
		t.Fatalf("rollback -o wrote: a has k=%v", got)
	}
	raw, err := os.ReadFile(planFile)
	if err != nil || !strings.Contains(string(raw), `"rollbackTo":1`) {
		t.Fatalf("the saved plan names no rollbackTo 1 (%v):\n%s", err, raw)
	}
	for _, leak := range []string{oldPassword, base64.StdEncoding.EncodeToString([]byte(oldPassword))} {
		if strings.Contains(string(raw)+saved.stdout+saved.stderr, leak) {
			t.Errorf("the saved rollback plan or its output holds the Secret's value %q", leak)
		}
	}
	without := kapply(t, "apply", "--plan", planFile, "-n", ns, "--applyset=web")
	if without.code != 1 || !strings.Contains(without.stderr, "Secret "+ns+"/creds") {
		t.Fatalf("apply --plan of a rollback with a Secret and no -f: want exit 1 naming it, got %d\n%s", without.code, without.stderr)
	}
	mustKapply(t, "apply", "--plan", planFile, "-n", ns, "--applyset=web", "-f", oldSecretDir)
	if got := getObject(t, rollbackConfigMaps, ns, "a").Object["data"].(map[string]any)["k"]; got != "one" {
		t.Errorf("apply --plan of the rollback: a has k=%v, want one", got)
	}
	creds := getObject(t, schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, ns, "creds")
	if got := creds.Object["data"].(map[string]any)["password"]; got != base64.StdEncoding.EncodeToString([]byte(oldPassword)) {
		t.Errorf("the Secret after the rollback holds %v, want the value given with -f", got)
	}

	// Revision 1 is no longer kept: the plan cannot be checked.
	mustKapply(t, append(applyArgs, "--history-limit", "1")...)
	gone := kapply(t, "apply", "--plan", planFile, "-n", ns, "--applyset=web", "-f", oldSecretDir)
	if gone.code == 0 || !strings.Contains(gone.stderr, "revision 1") || !strings.Contains(gone.stderr, "not kept") {
		t.Errorf("a rollback plan of a revision no longer kept: want it refused naming it, got %d\n%s", gone.code, gone.stderr)
	}
}

// TestRollbackRefusesAnImmutableFieldByName: a Job re-created by v2
// with another template cannot be patched back; the
// rollback is refused naming the Job and spec.template, with nothing
// written (the ConfigMap beside it keeps v2's value); with --force it is
// deleted and created again from revision 1.
func TestRollbackRefusesAnImmutableFieldByName(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := t.TempDir()
	job := func(msg string) string {
		return "apiVersion: batch/v1\nkind: Job\nmetadata: {name: migrate}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - {name: m, image: busybox, command: [echo, " + msg + "]}\n"
	}
	applyArgs := []string{"apply", "-f", dir, "-n", ns, "--prune", "--applyset=web"}
	writeTree(t, dir, map[string]string{"job.yaml": job("one"), "a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: one}\n"})
	mustKapply(t, applyArgs...)
	background := metav1.DeletePropagationBackground // no orphan finalizer: no garbage collector runs here
	// v2 re-creates the Job (kubectl refuses --force with --prune: deleted
	// by hand here).
	if err := dynClient(t).Resource(rollbackJobs).Namespace(ns).Delete(context.Background(), "migrate", metav1.DeleteOptions{PropagationPolicy: &background}); err != nil {
		t.Fatal(err)
	}
	writeTree(t, dir, map[string]string{"job.yaml": job("two"), "a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: two}\n"})
	mustKapply(t, applyArgs...)

	refused := kapply(t, "rollback", "--applyset=web", "-n", ns)
	if refused.code != 1 || !strings.Contains(refused.stderr, "Job "+ns+"/migrate") || !strings.Contains(refused.stderr, "spec.template") ||
		!strings.Contains(refused.stderr, "immutable") {
		t.Fatalf("want the rollback refused naming Job %s/migrate and spec.template, got %d\n%s%s", ns, refused.code, refused.stdout, refused.stderr)
	}
	if got := getObject(t, rollbackConfigMaps, ns, "a").Object["data"].(map[string]any)["k"]; got != "two" {
		t.Fatalf("the refused rollback wrote: a has k=%v", got)
	}

	mustKapply(t, "rollback", "--applyset=web", "-n", ns, "--force")
	cmd, _, _ := unstructured.NestedSlice(getObject(t, rollbackJobs, ns, "migrate").Object, "spec", "template", "spec", "containers")
	if got := cmd[0].(map[string]any)["command"].([]any); len(got) != 2 || got[1] != "one" {
		t.Errorf("the Job after rollback --force runs %v, want echo one", got)
	}
	if got := getObject(t, rollbackConfigMaps, ns, "a").Object["data"].(map[string]any)["k"]; got != "one" {
		t.Errorf("rollback --force: a has k=%v, want one", got)
	}
}

// TestHistoryWithADamagedRevision: a revision whose stored data was
// overwritten is listed as unreadable (the others as they were, exit 0),
// --revision on it fails naming it, rollback's default passes over it to
// the complete revision before; a damaged newest revision does not stop
// the next apply, which records a new revision after it with a warning.
func TestHistoryWithADamagedRevision(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	ctx := context.Background()
	dir := t.TempDir()
	applyArgs := []string{"apply", "-f", dir, "-n", ns, "--prune", "--applyset=web"}
	for _, v := range []string{"one", "two", "three"} {
		writeTree(t, dir, map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: " + v + "}\n"})
		mustKapply(t, applyArgs...)
	}
	secrets := dynClient(t).Resource(historySecrets).Namespace(ns)
	if _, err := secrets.Patch(ctx, "web-rev-2-0", types.MergePatchType, []byte(`{"data":{"revision.json.gz":"Z2FyYmFnZQ=="}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	list := mustKapply(t, "history", "--applyset=web", "-n", ns).stdout
	rows := strings.Split(strings.TrimSpace(list), "\n")
	if len(rows) != 4 || !strings.Contains(rows[2], "unreadable") || !strings.Contains(rows[2], "web-rev-2-0") ||
		strings.Contains(rows[1], "unreadable") || strings.Contains(rows[3], "unreadable") {
		t.Fatalf("want revisions 1 and 3 listed and 2 unreadable, naming its object:\n%s", list)
	}
	if r := kapply(t, "history", "--applyset=web", "-n", ns, "--revision", "2"); r.code != 1 || !strings.Contains(r.stderr, "web-rev-2-0") {
		t.Errorf("--revision of a damaged revision: want exit 1 naming it, got %d\n%s", r.code, r.stderr)
	}
	mustKapply(t, "rollback", "--applyset=web", "-n", ns)
	if got := getObject(t, rollbackConfigMaps, ns, "a").Object["data"].(map[string]any)["k"]; got != "one" {
		t.Errorf("rollback past a damaged revision: a has k=%v, want revision 1's one", got)
	}

	if _, err := secrets.Patch(ctx, "web-rev-4-0", types.MergePatchType, []byte(`{"metadata":{"annotations":{"kapply.dev/revision-counts":"{"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	again := mustKapply(t, applyArgs...)
	if !strings.Contains(again.stderr, "Warning: history of ApplySet") || !strings.Contains(again.stderr, "recording a new revision") {
		t.Errorf("an apply after a damaged newest revision: want a warning, got\n%s", again.stderr)
	}
	list = mustKapply(t, "history", "--applyset=web", "-n", ns).stdout
	if rows := strings.Split(strings.TrimSpace(list), "\n"); len(rows) != 6 || !strings.HasPrefix(rows[5], "5 ") || strings.Contains(rows[5], "unreadable") {
		t.Errorf("want revision 5 recorded after the damaged 4:\n%s", list)
	}
}

// TestKubectlMadeSetGetsHistory: a set kubectl made (no history) gets
// revision 1 from kapply's first apply of it, and rolls back from there.
func TestKubectlMadeSetGetsHistory(t *testing.T) {
	testcluster.Require(t, cluster)
	t.Setenv("KUBECTL_APPLYSET", "true")
	ns := cluster.Namespace(t)
	dir := t.TempDir()
	args := []string{"apply", "-f", dir, "-n", ns, "--prune", "--applyset=made"}
	for i, v := range []string{"kubectl", "two", "three"} {
		writeTree(t, dir, map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: " + v + "}\n"})
		if i == 0 {
			if out := kubectl(t, args...); !strings.Contains(out, "configmap/a") {
				t.Fatalf("kubectl did not apply:\n%s", out)
			}
			continue
		}
		mustKapply(t, args...)
	}
	list := mustKapply(t, "history", "--applyset=made", "-n", ns).stdout
	if rows := strings.Split(strings.TrimSpace(list), "\n"); len(rows) != 3 || !strings.HasPrefix(rows[1], "1 ") || !strings.HasPrefix(rows[2], "2 ") {
		t.Fatalf("want revisions 1 and 2 from kapply's applies of kubectl's set:\n%s", list)
	}
	mustKapply(t, "rollback", "--applyset=made", "-n", ns)
	if got := getObject(t, rollbackConfigMaps, ns, "a").Object["data"].(map[string]any)["k"]; got != "two" {
		t.Errorf("rollback: a has k=%v, want two", got)
	}
}
