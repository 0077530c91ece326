package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapply/kapply/internal/testcluster"
)

var (
	jobs     = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	services = schema.GroupVersionResource{Version: "v1", Resource: "services"}
)

// forceCase is one object whose second version changes an immutable field.
type forceCase struct {
	name     string
	resource schema.GroupVersionResource
	object   string
	before   string
	after    string
}

var forceCases = []forceCase{
	{"deployment selector", deployments, "deployment.apps/web",
		deploymentWithApp("a"), deploymentWithApp("b")},
	{"job template", jobs, "job.batch/j",
		jobWithImage("busybox:1"), jobWithImage("busybox:2")},
}

func deploymentWithApp(app string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec: {containers: [{name: web, image: nginx}]}
`, app)
}

func jobWithImage(image string) string {
	return fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: j, image: %q}]
`, image)
}

// TestForceReplacesAsKubectl: a change to an immutable field fails the
// patch (exit 1, the server's "field is immutable"), as in kubectl; with
// --force the object is deleted and created from the file, a new object
// (new UID) that carries the file's record, printed "configured" — kubectl
// apply --force, run on the same objects in another namespace, prints the
// same and leaves the same object.
func TestForceReplacesAsKubectl(t *testing.T) {
	testcluster.Require(t, cluster)
	requireKubectl(t)
	for _, tc := range forceCases {
		t.Run(tc.name, func(t *testing.T) {
			ours, theirs := cluster.Namespace(t), cluster.Namespace(t)
			dir := writeFiles(t, map[string]string{"o.yaml": tc.before})
			mustApply(t, dir, ours, tc.object+" created\n")
			if k := kubectlRun(t, "", "apply", "-f", dir, "-n", theirs); k.code != 0 {
				t.Fatalf("kubectl: %s", k.stderr)
			}
			uid := onlyObject(t, tc.resource, ours, "o").GetUID()
			writeFile(t, dir, "o.yaml", tc.after)

			r := kapply(t, "apply", "-f", dir, "-n", ours)
			k := kubectlRun(t, "", "apply", "-f", dir, "-n", theirs)
			if r.code != exitFailed || !strings.Contains(r.stderr, "field is immutable") || k.code != 1 || !strings.Contains(k.stderr, "field is immutable") {
				t.Errorf("without --force: kapply exit %d\n%s\nkubectl exit %d\n%s", r.code, r.stderr, k.code, k.stderr)
			}

			r = kapply(t, "apply", "-f", dir, "-n", ours, "--force", "--grace-period=0", "--timeout=30s")
			k = kubectlRun(t, "", "apply", "-f", dir, "-n", theirs, "--force", "--grace-period=0", "--timeout=30s")
			if r.code != 0 || r.stdout != tc.object+" configured\n" || r.stdout != k.stdout || k.code != 0 {
				t.Errorf("--force: kapply exit %d %q\n%s\nkubectl exit %d %q\n%s", r.code, r.stdout, r.stderr, k.code, k.stdout, k.stderr)
			}
			mine, kubectls := onlyObject(t, tc.resource, ours, "o"), onlyObject(t, tc.resource, theirs, "o")
			if mine.GetUID() == uid {
				t.Error("the object was not replaced: same UID")
			}
			if a, b := mine.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"], kubectls.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"]; a == "" || strings.ReplaceAll(a, ours, theirs) != b {
				t.Errorf("records differ:\nkapply  %s\nkubectl %s", a, b)
			}
			mustApply(t, dir, ours, tc.object+" unchanged\n")
		})
	}
}

// onlyObject is the one object of the resource in ns.
func onlyObject(t *testing.T, resource schema.GroupVersionResource, ns, _ string) *unstructured.Unstructured {
	t.Helper()
	list, err := dynClient(t).Resource(resource).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("listing %s in %s: %d items, %v", resource.Resource, ns, len(list.Items), err)
	}
	return &list.Items[0]
}

// TestForceKeepsOriginalWhenTheCreateIsInvalid: when the server would
// refuse the create from the file too (a Service's clusterIP outside the
// service range), kubectl deletes the object and creates the original
// again — the same clusterIP and selector, a new UID. kapply asks the
// server's dry run of the create first and deletes nothing: the same
// object (UID), the create's error, exit 1 for both.
func TestForceKeepsOriginalWhenTheCreateIsInvalid(t *testing.T) {
	testcluster.Require(t, cluster)
	requireKubectl(t)
	service := func(spec string) string {
		return "apiVersion: v1\nkind: Service\nmetadata: {name: svc}\nspec: {" + spec + ", ports: [{port: 80}]}\n"
	}
	for _, tool := range []string{"kapply", "kubectl"} {
		ns := cluster.Namespace(t)
		dir := writeFiles(t, map[string]string{"svc.yaml": service("selector: {app: a}")})
		mustApply(t, dir, ns, "service/svc created\n")
		before := onlyObject(t, services, ns, "svc")
		writeFile(t, dir, "svc.yaml", service("clusterIP: 192.168.99.99"))
		var r result
		if tool == "kapply" {
			r = kapply(t, "apply", "-f", dir, "-n", ns, "--force")
		} else {
			r = kubectlRun(t, "", "apply", "-f", dir, "-n", ns, "--force")
		}
		if r.code != 1 || !strings.Contains(r.stderr, "failed to allocate IP 192.168.99.99") {
			t.Errorf("%s: exit %d, want 1 and the create's error\n%s", tool, r.code, r.stderr)
		}
		if tool == "kapply" && !strings.Contains(r.stderr, "--force: not deleting the object: the server refuses to create it from the file") {
			t.Errorf("kapply: the error does not say the object was not deleted\n%s", r.stderr)
		}
		after := onlyObject(t, services, ns, "svc")
		ip, _, _ := unstructured.NestedString(after.Object, "spec", "clusterIP")
		wantIP, _, _ := unstructured.NestedString(before.Object, "spec", "clusterIP")
		selector, _, _ := unstructured.NestedStringMap(after.Object, "spec", "selector")
		if (after.GetUID() == before.GetUID()) != (tool == "kapply") || ip != wantIP || selector["app"] != "a" {
			t.Errorf("%s: uid %s (was %s), clusterIP %s (was %s), selector %v", tool, after.GetUID(), before.GetUID(), ip, wantIP, selector)
		}
	}
}

// TestForceRefusedAsKubectl: --force with --server-side, --dry-run=server
// or --prune is refused with kubectl's words, before anything is sent.
func TestForceRefusedAsKubectl(t *testing.T) {
	testcluster.Require(t, cluster)
	requireKubectl(t)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n"})
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--server-side"}, "error: --force cannot be used with --server-side\n"},
		{[]string{"--dry-run=server"}, "error: --dry-run=server cannot be used with --force\n"},
		{[]string{"--prune", "-l", "a=b"}, "error: --force cannot be used with --prune\n"},
	} {
		args := append([]string{"apply", "-f", dir, "-n", ns, "--force"}, tc.flags...)
		r, k := kapply(t, args...), kubectlRun(t, "", args...)
		if r.stderr != tc.want || k.stderr != tc.want || r.stdout != "" || r.code == 0 {
			t.Errorf("%v: kapply exit %d %q, kubectl exit %d %q; want %q", tc.flags, r.code, r.stderr, k.code, k.stderr, tc.want)
		}
	}
	if configMapExists(t, ns, "cm") {
		t.Error("a refused run created the object")
	}
}
