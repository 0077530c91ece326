package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kapply/kapply/internal/fixture"
	"github.com/kapply/kapply/internal/testcluster"
	"github.com/kapply/kapply/pkg/lastapplied"
)

var (
	configMaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

const createCases = `apiVersion: v1
kind: ConfigMap
metadata:
  name: plain
data:
  a: "1"
  b: two
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: annotated
  labels: {tier: web}
  annotations:
    owner: team-a
    kubectl.kubernetes.io/last-applied-configuration: "stale value from an old export"
data: {}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        args: ["-g", "daemon off;"]
        ports: [{containerPort: 80, protocol: TCP}, {containerPort: 80, protocol: UDP}]
        resources: {limits: {cpu: 500m, memory: 128Mi}}
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Secret
metadata:
  name: creds
stringData:
  password: s3cret
`

// TestApplyCreatesWithKubectlAnnotation creates objects with kapply, then
// the same objects with kubectl, and compares the last-applied records byte
// for byte (the Secret's with --secret-record=plain, kubectl's way; the
// redacted record is TestSecretRecordRedactedAndTakingTurnsWithKubectl's).
func TestApplyCreatesWithKubectlAnnotation(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"objects.yaml": createCases})

	r := kapply(t, "apply", "-f", dir, "-n", ns, "--secret-record=plain")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	wantLines := []string{"configmap/plain created", "configmap/annotated created", "deployment.apps/web created", "service/web created", "secret/creds created"}
	if got := strings.Count(r.stdout, "\n"); got != len(wantLines) {
		t.Fatalf("stdout:\n%s\nwant lines %q", r.stdout, wantLines)
	}
	for _, line := range wantLines {
		if !strings.Contains(r.stdout, line+"\n") {
			t.Errorf("stdout lacks %q:\n%s", line, r.stdout)
		}
	}
	ours := annotations(t, ns)
	testcluster.Kubectl(t)
	deleteAll(t, ns, ours)
	kubectl(t, "apply", "-f", dir, "-n", ns)
	theirs := annotations(t, ns)
	for obj, want := range theirs {
		if ours[obj] != want {
			t.Errorf("%s: last-applied differs from kubectl's\n kapply: %q\nkubectl: %q", obj, ours[obj], want)
		}
	}
	if len(ours) != 5 || len(theirs) != 5 {
		t.Errorf("compared %d kapply and %d kubectl records, want 5 each", len(ours), len(theirs))
	}
}

func sorted(lines []string) []string {
	return slices.Sorted(slices.Values(lines))
}

// annotations returns the last-applied record of every object the test
// creates, keyed by resource/name.
func annotations(t *testing.T, ns string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, res := range []string{"configmaps", "deployments", "services", "secrets"} {
		gvr := gvrOf(res)
		list, err := dynClient(t).Resource(gvr).Namespace(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatalf("listing %s: %v", res, err)
		}
		for _, item := range list.Items {
			if record, ok := item.GetAnnotations()[lastapplied.Annotation]; ok {
				out[res+"/"+item.GetName()] = record
			}
		}
	}
	return out
}

func deleteAll(t *testing.T, ns string, objs map[string]string) {
	t.Helper()
	for key := range objs {
		res, name, _ := strings.Cut(key, "/")
		if err := dynClient(t).Resource(gvrOf(res)).Namespace(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
			t.Fatalf("deleting %s: %v", key, err)
		}
	}
}

func gvrOf(resource string) schema.GroupVersionResource {
	if resource == "deployments" {
		return deployments
	}
	return schema.GroupVersionResource{Version: "v1", Resource: resource}
}

func dynClient(t *testing.T) dynamic.Interface {
	t.Helper()
	c, err := dynamic.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("kubectl", append(args, "--kubeconfig", cluster.Kubeconfig)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestApplyBadInputAppliesTheRest: a file that does not parse, an unknown
// kind and a missing name each fail with the file named; every good object
// is still created; the exit code is 1.
func TestApplyBadInputAppliesTheRest(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{
		"a-good.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: first}\n",
		"b-broken.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [unclosed\n",
		"c-unknown.yaml":  "apiVersion: example.com/v1\nkind: Gizmo\nmetadata: {name: g}\n",
		"d-noname.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {labels: {a: b}}\n",
		"e-good.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: last}\ndata: {k: v}\n",
		"f-rejected.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Not_A_Valid_Name}\n",
	})
	r := kapply(t, "apply", "-f", dir, "-n", ns)
	if r.code != exitFailed {
		t.Errorf("exit %d, want %d", r.code, exitFailed)
	}
	for _, name := range []string{"first", "last"} {
		if _, err := dynClient(t).Resource(configMaps).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{}); err != nil {
			t.Errorf("configmap %s not created: %v", name, err)
		}
	}
	wantErrors := map[string][]string{
		"b-broken.yaml":   {filepath.Join(dir, "b-broken.yaml")},
		"c-unknown.yaml":  {"gizmo.example.com/g", filepath.Join(dir, "c-unknown.yaml"), `unknown kind "Gizmo"`},
		"d-noname.yaml":   {filepath.Join(dir, "d-noname.yaml"), "metadata.name is missing"},
		"f-rejected.yaml": {"configmap/Not_A_Valid_Name", filepath.Join(dir, "f-rejected.yaml"), "Invalid value"},
	}
	for file, parts := range wantErrors {
		if !errorLineHasAll(r.stderr, parts) {
			t.Errorf("%s: no error line naming %q in stderr:\n%s", file, parts, r.stderr)
		}
	}
	if !strings.Contains(r.stdout, "configmap/first created\n") || !strings.Contains(r.stdout, "configmap/last created\n") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
}

func errorLineHasAll(stderr string, parts []string) bool {
	for _, line := range strings.Split(stderr, "\n") {
		// kubectl's prefixes: "Error from server (Conflict): " for an API
		// error with a reason, "error: " for the others.
		if !strings.HasPrefix(line, "error: ") && !strings.HasPrefix(line, "Error from server (") {
			continue
		}
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return true
		}
	}
	return false
}

// TestApplyUpdatesExistingObjects: re-applying is "unchanged"; a changed
// file is merged into the live object (a key dropped from the file is
// deleted, a key another writer added is kept); an object created without
// the annotation is patched with a warning and gets one; a malformed
// annotation is refused, as kubectl refuses it, and nothing changes.
func TestApplyUpdatesExistingObjects(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {a: \"1\", b: \"2\"}\n"})
	cms := dynClient(t).Resource(configMaps).Namespace(ns)
	ctx := context.Background()

	mustApply(t, dir, ns, "configmap/cm created\n")
	mustApply(t, dir, ns, "configmap/cm unchanged\n")

	if _, err := cms.Patch(ctx, "cm", types.MergePatchType, []byte(`{"data":{"c":"other writer"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {a: \"3\"}\n")
	mustApply(t, dir, ns, "configmap/cm configured\n")
	assertData(t, cms, "cm", map[string]any{"a": "3", "c": "other writer"})

	bare := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "bare", "annotations": map[string]any{lastapplied.Annotation: "{not json"}},
		"data":     map[string]any{"x": "1", "y": "2"}}}
	if _, err := cms.Create(ctx, bare, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bare}\ndata: {x: \"1\"}\n")
	r := kapply(t, "apply", "-f", dir, "-n", ns)
	if r.code != exitFailed || r.stdout != "" || !strings.Contains(r.stderr, "configmap/bare -n "+ns+" (from ") || !strings.Contains(r.stderr, "invalid JSON document") {
		t.Errorf("malformed annotation: exit %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
	}
	assertData(t, cms, "bare", map[string]any{"x": "1", "y": "2"})

	unannotated := bare.DeepCopy()
	unannotated.SetName("unannotated")
	unannotated.SetAnnotations(nil)
	if _, err := cms.Create(ctx, unannotated, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: unannotated}\ndata: {x: \"9\"}\n")
	r = kapply(t, "apply", "-f", dir, "-n", ns)
	if r.code != 0 || r.stdout != "configmap/unannotated configured\n" || !strings.Contains(r.stderr, "has no "+lastapplied.Annotation) {
		t.Errorf("missing annotation: exit %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
	}
	live, err := cms.Get(ctx, "unannotated", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := live.GetAnnotations()[lastapplied.Annotation]; !ok {
		t.Errorf("no last-applied annotation after apply: %v", live.GetAnnotations())
	}
}

func mustApply(t *testing.T, dir, ns, wantStdout string) {
	t.Helper()
	r := kapply(t, "apply", "-f", dir, "-n", ns)
	if r.code != 0 || r.stdout != wantStdout {
		t.Fatalf("exit %d\nstdout %q, want %q\nstderr %s", r.code, r.stdout, wantStdout, r.stderr)
	}
}

func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func assertData(t *testing.T, client dynamic.ResourceInterface, name string, want map[string]any) {
	t.Helper()
	live, err := client.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := live.Object["data"]; !reflect.DeepEqual(got, want) {
		t.Errorf("%s data = %v, want %v", name, got, want)
	}
}

// TestApplyTreeWithCRDAndNamespace applies, in one run, a Namespace, a CRD, a
// custom resource of it and objects inside the Namespace — given in an order
// where every dependent comes first.
func TestApplyTreeWithCRDAndNamespace(t *testing.T) {
	testcluster.Require(t, cluster)
	suffix := strings.ToLower(strings.ReplaceAll(t.Name(), "Test", ""))
	ns := "tree-" + suffix[:min(len(suffix), 20)]
	group := suffix[:min(len(suffix), 20)] + ".example.com"
	dir := writeFiles(t, map[string]string{
		"1-widget.yaml": fixture.Widget(group, ns, "w1", "size: 3"),
		"2-cm.yaml":     fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: %s}\n", ns),
		"3-crd.yaml":    fixture.WidgetCRD(group),
		"4-ns.yaml":     fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n", ns),
	})
	r := kapply(t, "apply", "-f", dir)
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// Lines keep the input order unless that holds one back longer than
	// holdBack: here the Namespace's, done first, waits for the CRD to be
	// established and the widget applied, which a busy machine may stretch.
	want := fmt.Sprintf("widget.%s/w1 created\nconfigmap/cm created\ncustomresourcedefinition.apiextensions.k8s.io/widgets.%s created\nnamespace/%s created\n", group, group, ns)
	if got := strings.Split(r.stdout, "\n"); !slices.Equal(sorted(got), sorted(strings.Split(want, "\n"))) {
		t.Errorf("stdout:\n%s\nwant, in any order:\n%s", r.stdout, want)
	}
	widgets := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}
	if _, err := dynClient(t).Resource(widgets).Namespace(ns).Get(context.Background(), "w1", metav1.GetOptions{}); err != nil {
		t.Errorf("widget not created: %v", err)
	}
}
