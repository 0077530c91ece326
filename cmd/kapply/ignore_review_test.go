package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapply/kapply/internal/testcluster"
)

// TestRespectIgnoreOfMetadataKeepsServerFieldsOut: a rule that ignores
// the whole metadata (or the whole object) under apply --respect-ignore
// copies the live labels and annotations into the file, but never what
// the server writes — resourceVersion, uid, managedFields,
// creationTimestamp — nor the last-applied record itself: those in the
// request would lock on a stale version and fill the record, and every
// apply would write again. A second apply is unchanged.
func TestRespectIgnoreOfMetadataKeepsServerFieldsOut(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c1, labels: {a: b}}\ndata: {k: v}\n"})
	if r := kapply(t, "apply", "-f", dir, "-n", ns); r.code != 0 {
		t.Fatalf("apply: exit %d: %s", r.code, r.stderr)
	}
	configMaps := dynClient(t).Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns)
	for _, rule := range []string{"kind=ConfigMap,pointer=/metadata", "kind=ConfigMap,jq=.[]"} {
		var last string
		for i := 1; i <= 2; i++ {
			r := kapply(t, "apply", "-f", dir, "-n", ns, "--respect-ignore", "--ignore", rule)
			if r.code != 0 {
				t.Fatalf("apply --respect-ignore --ignore %s: exit %d: %s", rule, r.code, r.stderr)
			}
			last = r.stdout
			live, err := configMaps.Get(context.Background(), "c1", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			record := live.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"]
			for _, field := range []string{"resourceVersion", "managedFields", "uid", "creationTimestamp", "last-applied-configuration"} {
				if strings.Contains(record, field) {
					t.Errorf("--ignore %s, apply #%d: the last-applied record holds the server's %s: %s", rule, i, field, record)
				}
			}
		}
		if !strings.Contains(last, "configmap/c1 unchanged") {
			t.Errorf("--ignore %s: the second apply --respect-ignore wrote again, want unchanged:\n%s", rule, last)
		}
	}
}

// TestRespectIgnoreJQTimeoutFailsTheObject: a jq expression that runs out
// of its time on an object has an unknown answer, not "no field": under
// apply --respect-ignore taking it for no match wrote the file's value
// over the live one the rule meant to keep. The object fails instead,
// naming the rule; live is left as it was.
func TestRespectIgnoreJQTimeoutFailsTheObject(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c1}\ndata: {k: v}\n"})
	if r := kapply(t, "apply", "-f", dir, "-n", ns); r.code != 0 {
		t.Fatalf("apply: exit %d: %s", r.code, r.stderr)
	}
	writeFile(t, dir, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c1}\ndata: {k: v2}\n")
	r := kapply(t, "apply", "-f", dir, "-n", ns, "--respect-ignore", "--ignore", "kind=ConfigMap,jq=.data.k, (def forever: forever; forever)")
	if r.code != 1 || !strings.Contains(r.stderr, "configmap") || !strings.Contains(r.stderr, "--ignore #1") {
		t.Errorf("apply --respect-ignore with a jq expression that never ends: exit %d, want 1 naming the object and the rule:\n%s%s", r.code, r.stdout, r.stderr)
	}
	live, err := dynClient(t).Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns).Get(context.Background(), "c1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if k := live.Object["data"].(map[string]any)["k"]; k != "v" {
		t.Errorf("data.k = %v after the failed apply, want v (the live value the rule keeps)", k)
	}
}

// TestIgnoreRulesOnSecretsNeverPrintValues: ignore rules on a Secret, in
// every output of diff (text, --explain, --suggest-ignore, markdown,
// html, json), in status, and in apply --respect-ignore, print no value
// of the Secret, live or from the file.
func TestIgnoreRulesOnSecretsNeverPrintValues(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	secret := func(a, b string) string {
		return "apiVersion: v1\nkind: Secret\nmetadata: {name: s1}\nstringData: {a: " + a + ", b: " + b + "}\n"
	}
	dir := writeFiles(t, map[string]string{"s.yaml": secret("liveAAA1", "liveBBB1")})
	if r := kapply(t, "apply", "-f", dir, "-n", ns); r.code != 0 {
		t.Fatalf("apply: exit %d: %s", r.code, r.stderr)
	}
	writeFile(t, dir, "s.yaml", secret("fileAAA2", "fileBBB2"))
	values := []string{"liveAAA1", "liveBBB1", "fileAAA2", "fileBBB2"}
	for _, v := range append([]string{}, values...) { // base64 too
		values = append(values, b64(v))
	}
	rule := "kind=Secret,pointer=/data/a"
	runs := [][]string{
		{"diff", "--ignore", rule},
		{"diff", "--ignore", rule, "--explain"},
		{"diff", "--ignore", rule, "--suggest-ignore"},
		{"diff", "--ignore", rule, "-o", "markdown"},
		{"diff", "--ignore", rule, "-o", "html"},
		{"diff", "--ignore", "kind=Secret,jq=.data[]", "--explain"},
		{"diff", "--ignore", rule, "-o", "events"},
		{"diff", "--ignore", rule, "--server-side", "--explain"},
		{"diff", "--ignore", rule, "--server-side", "--suggest-ignore"},
		{"diff", "--ignore", rule, "--save-plan", filepath.Join(t.TempDir(), "plan.json")},
		{"plan", "--ignore", rule, "-o", "-"},
		{"plan", "--ignore", "kind=Secret,jq=.data[]", "--server-side", "-o", "-"},
		{"status", "--ignore", rule},
		{"apply", "--respect-ignore", "--ignore", rule},
	}
	for _, args := range runs {
		r := kapply(t, append(args, "-f", dir, "-n", ns)...)
		if r.code > 1 {
			t.Errorf("%v: exit %d: %s", args, r.code, r.stderr)
		}
		for _, v := range values {
			if strings.Contains(r.stdout+r.stderr, v) {
				t.Errorf("%v prints a Secret value (%s):\n%s%s", args, v, r.stdout, r.stderr)
			}
		}
	}
}

// TestRespectIgnorePositionNamesOneElement: a pointer with a list
// position ("a number under a list is a position") names, under apply
// --respect-ignore, the live element at that position; when the file
// holds another element there (its containers reordered), copying the
// live value gave one container another's image. The object fails
// instead, naming the rule; live is left as it was.
func TestRespectIgnorePositionNamesOneElement(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"web.yaml": ignoreWeb})
	if r := kapply(t, "apply", "-f", dir, "-n", ns); r.code != 0 {
		t.Fatalf("apply: exit %d: %s", r.code, r.stderr)
	}
	reordered := strings.Replace(ignoreWeb, "      - {name: web, image: \"nginx:1.27\"}\n      - {name: sidecar, image: \"busybox:1\"}\n",
		"      - {name: sidecar, image: \"busybox:1\"}\n      - {name: web, image: \"nginx:1.27\"}\n", 1)
	if reordered == ignoreWeb {
		t.Fatal("the containers were not reordered")
	}
	writeFile(t, dir, "web.yaml", reordered)
	r := kapply(t, "apply", "-f", dir, "-n", ns, "--respect-ignore", "--ignore", "kind=Deployment,pointer=/spec/template/spec/containers/1/image")
	live, err := dynClient(t).Resource(deployments).Namespace(ns).Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	images := map[string]string{}
	for _, c := range live.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any) {
		c := c.(map[string]any)
		images[c["name"].(string)] = c["image"].(string)
	}
	if images["web"] != "nginx:1.27" || images["sidecar"] != "busybox:1" {
		t.Errorf("after apply --respect-ignore (exit %d) the images are %v, want web nginx:1.27 and sidecar busybox:1:\n%s%s", r.code, images, r.stdout, r.stderr)
	}
	if r.code != 1 || !strings.Contains(r.stderr, "--ignore #1") {
		t.Errorf("exit %d, want 1 naming the rule:\n%s%s", r.code, r.stdout, r.stderr)
	}
}
