package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapply/kapply/internal/testcluster"
	"github.com/kapply/kapply/pkg/lastapplied"
)

// ownedDeployment is a Deployment file; replicas "" leaves the field out.
func ownedDeployment(name, replicas string) string {
	out := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: " + name + "\nspec:\n"
	if replicas != "" {
		out += "  replicas: " + replicas + "\n"
	}
	return out + `  selector:
    matchLabels: {app: ` + name + `}
  template:
    metadata:
      labels: {app: ` + name + `}
    spec:
      containers:
      - name: web
        image: nginx:1.27
`
}

// liveObject reads an object from the test cluster.
func liveObject(t *testing.T, gvr schema.GroupVersionResource, ns, name string) *unstructured.Unstructured {
	t.Helper()
	obj, err := dynClient(t).Resource(gvr).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading %s/%s: %v", gvr.Resource, name, err)
	}
	return obj
}

func liveReplicas(t *testing.T, ns, name string) int64 {
	t.Helper()
	n, _, err := unstructured.NestedInt64(liveObject(t, deployments, ns, name).Object, "spec", "replicas")
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func mustRun(t *testing.T, args ...string) result {
	t.Helper()
	r := kapply(t, args...)
	if r.code != 0 {
		t.Fatalf("kapply %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

// TestReleaseReplicasToKubectlScale is the doc's "from the file to an
// imperative writer": replicas are released to kubectl scale, and applying
// the file without replicas keeps the scaled value. The same steps without
// release reset the Deployment to one replica.
func TestReleaseReplicasToKubectlScale(t *testing.T) {
	testcluster.Require(t, cluster)
	requireKubectl(t)
	ns := cluster.Namespace(t)
	withReplicas := writeFiles(t, map[string]string{"d.yaml": ownedDeployment("released", "2") + "---\n" + ownedDeployment("kept", "2")})
	without := writeFiles(t, map[string]string{"d.yaml": ownedDeployment("released", "") + "---\n" + ownedDeployment("kept", "")})
	releasedOnly := writeFiles(t, map[string]string{"d.yaml": ownedDeployment("released", "")})
	mustRun(t, "apply", "-f", withReplicas, "-n", ns)
	kubectl(t, "scale", "deployment", "released", "kept", "--replicas=5", "-n", ns)

	assertScaleDrift(t, withReplicas, ns)

	dry := mustRun(t, "release", "-f", withReplicas, "-n", ns, "--field", "spec.replicas", "--dry-run")
	if !strings.Contains(dry.stderr, "still sets spec.replicas") || !strings.Contains(dry.stdout, "(dry run)") {
		t.Errorf("dry run: want a still-set warning and a dry-run line:\n%s%s", dry.stdout, dry.stderr)
	}
	assertRecordHas(t, ns, "released", true)

	r := mustRun(t, "release", "-f", releasedOnly, "-n", ns, "--field", "spec.replicas")
	if r.stdout != "deployment.apps/released released spec.replicas\n" || r.stderr != "" {
		t.Errorf("release output:\n%s%s", r.stdout, r.stderr)
	}
	assertRecordHas(t, ns, "released", false)

	mustRun(t, "apply", "-f", without, "-n", ns)
	if got := liveReplicas(t, ns, "released"); got != 5 {
		t.Errorf("released: replicas %d after apply, want 5 (kept from kubectl scale)", got)
	}
	if got := liveReplicas(t, ns, "kept"); got != 1 {
		t.Errorf("not released: replicas %d after apply, want 1 (deleted by apply, defaulted)", got)
	}
}

func requireKubectl(t *testing.T) {
	t.Helper()
	testcluster.Kubectl(t)
}

func assertRecordHas(t *testing.T, ns, name string, want bool) {
	t.Helper()
	record, err := lastapplied.Read(liveObject(t, deployments, ns, name))
	if err != nil || record == nil {
		t.Fatalf("reading the record of %s: %v (record %v)", name, err, record)
	}
	_, has, _ := unstructured.NestedFieldNoCopy(record, "spec", "replicas")
	if has != want {
		t.Errorf("%s: record has spec.replicas = %v, want %v", name, has, want)
	}
}

// assertScaleDrift checks that status reports the scaled replicas and who
// scaled them.
func assertScaleDrift(t *testing.T, dir, ns string) {
	t.Helper()
	r := kapply(t, "status", "-f", dir, "-n", ns, "-o", "json")
	if r.code != exitDrift {
		t.Errorf("status -o json with drift: exit %d, want %d\n%s", r.code, exitDrift, r.stderr)
	}
	var statuses []struct {
		Object  string
		State   string
		Changed []struct {
			Path        string
			LastApplied any
			Live        any
			Managers    []string
		}
		Foreign []struct {
			Path     string
			Managers []string
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &statuses); err != nil {
		t.Fatalf("status -o json: %v\n%s", err, r.stdout)
	}
	if len(statuses) != 2 {
		t.Fatalf("status: %d objects, want 2:\n%s", len(statuses), r.stdout)
	}
	for _, s := range statuses {
		if s.State != "applied" || len(s.Changed) != 1 || s.Changed[0].Path != "spec.replicas" ||
			s.Changed[0].Live != float64(5) || s.Changed[0].LastApplied != float64(2) || len(s.Changed[0].Managers) == 0 {
			t.Errorf("status of %s: want spec.replicas changed 2 -> 5 with its manager:\n%s", s.Object, r.stdout)
		}
		if len(s.Foreign) != 1 || s.Foreign[0].Path != "spec.replicas" {
			t.Errorf("status of %s: want spec.replicas foreign:\n%s", s.Object, r.stdout)
		}
	}
	text := kapply(t, "status", "-f", dir, "-n", ns)
	if text.code != exitDrift || !strings.Contains(text.stdout, "spec.replicas: last applied 2, live 5 (owned by kubectl") {
		t.Errorf("status text:\n%s", text.stdout)
	}
}

// TestReleaseBadInput: a malformed path, a path not in the record and an
// object without a record each fail with exit 2 and change nothing.
func TestReleaseBadInput(t *testing.T) {
	testcluster.Require(t, cluster)
	requireKubectl(t)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"d.yaml": ownedDeployment("web", "2")})
	mustRun(t, "apply", "-f", dir, "-n", ns)
	kubectl(t, "create", "configmap", "bare", "--from-literal=a=1", "-n", ns)
	bare := writeFiles(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bare}\n"})
	missing := writeFiles(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: nowhere}\n"})
	before := liveObject(t, deployments, ns, "web").GetResourceVersion()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-f", dir, "--field", "spec..replicas"}, "empty field name"},
		{[]string{"-f", dir, "--field", "spec.template.spec.containers[0]"}, "not by position"},
		{[]string{"-f", dir, "--field", "spec.template.spec.containers[name=web"}, "expected ]"},
		{[]string{"-f", dir, "--field", "spec.paused"}, "spec.paused: field not found"},
		{[]string{"-f", dir, "--field", "spec.replicas", "--field", "spec.template.spec.containers[name=nginx].image"}, "no list element matches"},
		{[]string{"-f", bare, "--field", "data.a"}, "no last-applied-configuration annotation found"},
		{[]string{"-f", missing, "--field", "data.a"}, "not found"},
		{[]string{"-f", dir}, "at least one --field"},
	} {
		r := kapply(t, append([]string{"release", "-n", ns}, tc.args...)...)
		if r.code != exitError || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("release %v: exit %d, stderr %q; want exit 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	if after := liveObject(t, deployments, ns, "web").GetResourceVersion(); after != before {
		t.Errorf("the Deployment changed (resourceVersion %s -> %s)", before, after)
	}
}
