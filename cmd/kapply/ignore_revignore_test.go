package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapply/kapply/internal/testcluster"
)

// TestRespectIgnoreSecretDataKeyOfStringData: a rule on /data/a of a
// Secret whose file writes stringData.a hid a's change from the diff,
// but apply --respect-ignore copied live's data.a and left stringData.a,
// which the server writes over data: the live value was overwritten, on
// the real server, client-side and server-side. It is kept now, and the
// other key the file writes through stringData is still written.
func TestRespectIgnoreSecretDataKeyOfStringData(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	secret := func(a, b string) string {
		return "apiVersion: v1\nkind: Secret\nmetadata: {name: s1}\nstringData: {a: " + a + ", b: " + b + "}\n"
	}
	secrets := dynClient(t).Resource(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}).Namespace(ns)
	for _, mode := range [][]string{nil, {"--server-side", "--force-conflicts"}} {
		dir := writeFiles(t, map[string]string{"s.yaml": secret("liveAAA1", "liveBBB1")})
		if r := kapply(t, append([]string{"apply", "-f", dir, "-n", ns}, mode...)...); r.code != 0 {
			t.Fatalf("apply %v: exit %d: %s", mode, r.code, r.stderr)
		}
		writeFile(t, dir, "s.yaml", secret("fileAAA2", "fileBBB2"))
		if r := kapply(t, "diff", "-f", dir, "-n", ns, "--ignore", "kind=Secret,pointer=/data/a", "--explain"); r.code != 1 {
			t.Fatalf("diff %v: exit %d, want 1 (b changes): %s", mode, r.code, r.stderr)
		}
		args := append([]string{"apply", "-f", dir, "-n", ns, "--respect-ignore", "--ignore", "kind=Secret,pointer=/data/a"}, mode...)
		if r := kapply(t, args...); r.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
		}
		live, err := secrets.Get(context.Background(), "s1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		data, _ := live.Object["data"].(map[string]any)
		if data["a"] != b64("liveAAA1") || data["b"] != b64("fileBBB2") {
			t.Errorf("%v: data.a kept live: %v, data.b the file's: %v; want a kept, b written", mode, data["a"] == b64("liveAAA1"), data["b"] == b64("fileBBB2"))
		}
		if err := secrets.Delete(context.Background(), "s1", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSuggestIgnoreServerSideScaledByKubectl: kubectl scale writes
// spec.replicas as "kubectl" through the scale subresource, the name
// apply --server-side applies as; diff --server-side --explain called the
// scaled replicas the file's and --suggest-ignore wrote no rule. Now they
// are another writer's, the suggested rule silences them (exit 0), and a
// real change of the file still shows (exit 1).
func TestSuggestIgnoreServerSideScaledByKubectl(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	deploy := func(image string) string {
		return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n" +
			"  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: app, image: " + image + "}]}\n"
	}
	dir := writeFiles(t, map[string]string{"d.yaml": deploy("nginx:1")})
	if r := kapply(t, "apply", "--server-side", "-f", dir, "-n", ns); r.code != 0 {
		t.Fatalf("apply: exit %d: %s", r.code, r.stderr)
	}
	deployments := dynClient(t).Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}).Namespace(ns)
	if _, err := deployments.Patch(context.Background(), "web", types.MergePatchType, []byte(`{"spec":{"replicas":4}}`),
		metav1.PatchOptions{FieldManager: "kubectl"}, "scale"); err != nil {
		t.Fatal(err)
	}
	diff := []string{"diff", "--server-side", "--force-conflicts", "-f", dir, "-n", ns}
	if r := kapply(t, append(diff, "--explain")...); r.code != 1 || !strings.Contains(r.stdout, "spec.replicas: other writer: kubectl (scale)") {
		t.Fatalf("--explain: exit %d, want 1 and replicas another writer's:\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := kapply(t, append(diff, "--suggest-ignore")...)
	if r.code != 1 || !strings.Contains(r.stdout, "/spec/replicas") || strings.Contains(r.stdout, "managedFieldsManagers") {
		t.Fatalf("--suggest-ignore: exit %d, want 1 and a pointer to spec.replicas (no manager rule):\n%s%s", r.code, r.stdout, r.stderr)
	}
	rules := filepath.Join(t.TempDir(), "rules.yaml")
	writeFile(t, filepath.Dir(rules), "rules.yaml", r.stdout)
	if r := kapply(t, append(diff, "--ignore-file", rules)...); r.code != 0 {
		t.Errorf("diff with the suggested rules: exit %d, want 0:\n%s%s", r.code, r.stdout, r.stderr)
	}
	writeFile(t, dir, "d.yaml", deploy("nginx:2"))
	if r := kapply(t, append(diff, "--ignore-file", rules)...); r.code != 1 || !strings.Contains(r.stdout, "nginx:2") || strings.Contains(r.stdout, "replicas: 2") {
		t.Errorf("a new image with the suggested rules: exit %d, want 1 showing the image only:\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestPlanSecretKeyKeptLiveRuns: a plan whose rule keeps a Secret's data
// key at its live value, the file giving another, could not be executed:
// apply --plan -f checked the file's value against the plan's and
// refused ("data.a differ"). The item records the key (keptLive), and the
// file's value there is taken as live's, which the plan was made with;
// the key is kept and the file's other key written, client- and
// server-side.
func TestPlanSecretKeyKeptLiveRuns(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	secrets := dynClient(t).Resource(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}).Namespace(ns)
	for _, form := range []string{"data", "stringData"} {
		secret := func(a, b string) string {
			if form == "data" {
				a, b = b64(a), b64(b)
			}
			return "apiVersion: v1\nkind: Secret\nmetadata: {name: s1}\n" + form + ": {a: " + a + ", b: " + b + "}\n"
		}
		for _, mode := range [][]string{nil, {"--server-side"}} {
			dir := writeFiles(t, map[string]string{"s.yaml": secret("liveAAA1", "liveBBB1")})
			if r := kapply(t, append([]string{"apply", "-f", dir, "-n", ns}, mode...)...); r.code != 0 {
				t.Fatalf("apply %v: exit %d: %s", mode, r.code, r.stderr)
			}
			writeFile(t, dir, "s.yaml", secret("fileAAA2", "fileBBB2"))
			planFile := filepath.Join(t.TempDir(), "plan.json")
			args := append([]string{"plan", "-f", dir, "-n", ns, "--ignore", "kind=Secret,pointer=/data/a", "-o", planFile}, mode...)
			if r := kapply(t, args...); r.code != 0 {
				t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
			}
			if r := kapply(t, "apply", "--plan", planFile, "-f", dir, "-n", ns); r.code != 0 {
				t.Errorf("%s %v: apply --plan: exit %d: %s", form, mode, r.code, r.stderr)
			}
			live, err := secrets.Get(context.Background(), "s1", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			data, _ := live.Object["data"].(map[string]any)
			if data["a"] != b64("liveAAA1") || data["b"] != b64("fileBBB2") {
				t.Errorf("%s %v: data.a kept live: %v, data.b the file's: %v; want both", form, mode, data["a"] == b64("liveAAA1"), data["b"] == b64("fileBBB2"))
			}
			if err := secrets.Delete(context.Background(), "s1", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
}
