package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kapply/kapply/internal/fixture"
	"github.com/kapply/kapply/internal/testcluster"
)

// csaObject is one object of the client-side test: the file that made
// it and the file diffed against it.
type csaObject struct{ name, before, after string }

const csaDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web%s}
spec:
  replicas: %d
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: %s
        ports: [{containerPort: 80}]
        env:
        - {name: A, value: "1"}%s
`

const csaService = `apiVersion: v1
kind: Service
metadata: {name: web%s}
spec:
  selector: {app: %s}
  ports:
  - {name: http, port: 80, targetPort: %d}%s
`

// csaObjects are a Deployment, a Service, a ConfigMap and a custom
// resource; each changed file changes a value (the image, as the issue's
// Deployment), drops a field and a list element, and adds some. (No new
// element of a list whose elements the server defaults, as a Service's
// port: the server's defaults are what the local computation cannot know,
// see docs/local-server-side.md.)
func csaObjects(group string) []csaObject {
	return []csaObject{
		{"deployment",
			fmt.Sprintf(csaDeployment, ", tier: front", 2, "nginx:1.27", "\n        - {name: B, value: \"2\"}"),
			fmt.Sprintf(csaDeployment, "", 3, "nginx:1.28", "")},
		{"deployment-image-only",
			strings.Replace(fmt.Sprintf(csaDeployment, "", 1, "nginx:1.27", ""), "name: web\n", "name: image\n", 1),
			strings.Replace(fmt.Sprintf(csaDeployment, "", 1, "nginx:1.28", ""), "name: web\n", "name: image\n", 1)},
		{"service",
			fmt.Sprintf(csaService, "", "web", 8080, "\n  - {name: metrics, port: 9090}"),
			fmt.Sprintf(csaService, ", labels: {team: a}", "web2", 8081, "")},
		{"configmap",
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, labels: {a: one, b: two}}\ndata: {x: one, y: two}\n",
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, labels: {a: one}}\ndata: {x: changed, z: three}\n"},
		{"widget",
			fixture.Widget(group, "", "w", "size: 1, tags: [a, b], byName: [{name: one, value: '1'}, {name: two, value: '2'}], selector: {app: x}"),
			fixture.Widget(group, "", "w", "size: 2, tags: [a], byName: [{name: one, value: changed}], env: {K: v}")},
	}
}

// csaModes are the flags each object is diffed with, locally and by the
// server: kubectl's manager (the server waives its conflicts with fields
// client-side apply set as the record says) and another manager (no
// waiver: the changed fields are conflicts), each without and with
// --force-conflicts.
var csaModes = [][]string{
	{},
	{"--force-conflicts"},
	{"--field-manager", "mine"},
	{"--field-manager", "mine", "--force-conflicts"},
}

// TestDiffLocalServerSideOfClientSideObjects: on objects made by
// client-side apply — kapply's and kubectl v1.37's — then a changed file,
// `diff --local --server-side` prints what the server's dry run
// (`diff --server-side`) prints, with the same exit code, under each
// manager, with and without --force-conflicts. (It once upgraded the
// client-side owners first, as apply does before its patch but no dry
// run can: the fields the server defaulted at create showed as removed.)
func TestDiffLocalServerSideOfClientSideObjects(t *testing.T) {
	testcluster.Require(t, cluster)
	group := "localcsa.example.com"
	if r := kapply(t, "apply", "-f", writeFiles(t, map[string]string{"crd.yaml": fixture.WidgetCRD(group)})); r.code != 0 {
		t.Fatalf("CRD: exit %d\n%s", r.code, r.stderr)
	}
	waitServed(t, group+"/v1", "widgets")
	objects := csaObjects(group)
	creators := []struct {
		name   string
		create func(t *testing.T, dir, ns string)
	}{
		{"kapply", func(t *testing.T, dir, ns string) {
			if r := kapply(t, "apply", "-f", dir, "-n", ns); r.code != 0 {
				t.Fatalf("kapply apply: exit %d\n%s", r.code, r.stderr)
			}
		}},
		{"kubectl", func(t *testing.T, dir, ns string) {
			if out, err := exec.Command(requireKubectl137(t), "apply", "-f", dir, "-n", ns, "--kubeconfig", cluster.Kubeconfig).CombinedOutput(); err != nil {
				t.Fatalf("kubectl apply: %v\n%s", err, out)
			}
		}},
	}
	for _, creator := range creators {
		t.Run(creator.name, func(t *testing.T) {
			ns := cluster.Namespace(t)
			before, after := map[string]string{}, map[string]string{}
			for _, o := range objects {
				before[o.name+".yaml"], after[o.name+".yaml"] = o.before, o.after
			}
			creator.create(t, writeFiles(t, before), ns)
			dir := writeFiles(t, after)
			for _, o := range objects {
				file := filepath.Join(dir, o.name+".yaml")
				for _, mode := range csaModes {
					compareLocalWithServer(t, fmt.Sprintf("%s %v", o.name, mode), append([]string{"-f", file, "-n", ns}, mode...))
				}
			}
		})
	}
}

// compareLocalWithServer diffs with args locally and by the server's dry
// run: the same stdout and exit code, or, for a conflict, the same
// fields named.
func compareLocalWithServer(t *testing.T, what string, args []string) {
	t.Helper()
	local := kapply(t, append([]string{"diff", "--local", "--server-side"}, args...)...)
	server := kapply(t, append([]string{"diff", "--server-side"}, args...)...)
	switch {
	case server.code > 1:
		fields := conflictFields(server.stderr)
		if len(fields) == 0 || local.code != server.code || !slices.Equal(conflictFields(local.stderr), fields) {
			t.Errorf("%s: the server refused (exit %d, conflicts %q), local: exit %d, conflicts %q\nserver:\n%s\nlocal:\n%s",
				what, server.code, fields, local.code, conflictFields(local.stderr), server.stderr, local.stderr)
		}
	case local.code != server.code || local.stdout != server.stdout:
		t.Errorf("%s: local exit %d, server exit %d\nlocal:\n%s\nserver:\n%s\nlocal stderr:\n%s", what, local.code, server.code, local.stdout, server.stdout, local.stderr)
	case server.code != 1:
		t.Errorf("%s: the server's dry run shows no change (exit %d): the test compares nothing", what, server.code)
	}
	if local.code <= 1 && !strings.Contains(local.stderr, "computed locally") {
		t.Errorf("%s: stderr does not say the result is computed locally:\n%s", what, local.stderr)
	}
}

var conflictField = regexp.MustCompile(`(\S+) \(conflict with "([^"]+)"`)

// conflictFields are the fields and managers a conflict error names,
// sorted.
func conflictFields(stderr string) []string {
	var out []string
	for _, m := range conflictField.FindAllStringSubmatch(stderr, -1) {
		out = append(out, m[1]+" "+m[2])
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// requireKubectl137 is kubectl v1.37 as the lead builds it into
// bin/kubectlcmd: a test needing it skips without it, and fails under CI.
func requireKubectl137(t *testing.T) string {
	t.Helper()
	path := kubectl137(t)
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("kubectl v1.37 is not built (bin/kubectlcmd/kubectl)")
		}
		t.Skip("kubectl v1.37 is not built (bin/kubectlcmd/kubectl)")
	}
	return path
}

const csaAutoscaler = `apiVersion: autoscaling/%s
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 1
  maxReplicas: %d
`

// TestDiffLocalServerSideSaysWhereItMayDiffer: where the local
// computation cannot follow the server — owners recorded in another
// version of the kind, which the server converts and the local
// computation cannot — `diff --local --server-side` says so, naming the
// object, the managers and the version.
func TestDiffLocalServerSideSaysWhereItMayDiffer(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	if r := kapply(t, "apply", "-f", writeFiles(t, map[string]string{"hpa.yaml": fmt.Sprintf(csaAutoscaler, "v1", 3)}), "-n", ns); r.code != 0 {
		t.Fatalf("applying in autoscaling/v1: exit %d\n%s", r.code, r.stderr)
	}
	file := writeFiles(t, map[string]string{"hpa.yaml": fmt.Sprintf(csaAutoscaler, "v2", 4)})
	local := kapply(t, "diff", "--local", "--server-side", "--force-conflicts", "-f", file, "-n", ns)
	want := "horizontalpodautoscaler.autoscaling/web -n " + ns + ": server-side apply computed locally may differ from the server's: " +
		`the fields of "kubectl-client-side-apply" are recorded in autoscaling/v1, which the server converts to autoscaling/v2 and the local computation cannot`
	if local.code != 1 || !strings.Contains(local.stderr, want) {
		t.Errorf("exit %d (want 1), stderr lacks %q:\n%s", local.code, want, local.stderr)
	}
	server := kapply(t, "diff", "--server-side", "--force-conflicts", "-f", file, "-n", ns)
	t.Logf("local and server outputs equal: %t\nlocal:\n%s\nserver:\n%s", local.stdout == server.stdout, local.stdout, server.stdout)
	same := writeFiles(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain}\ndata: {a: one}\n"})
	kapply(t, "apply", "-f", same, "-n", ns)
	if r := kapply(t, "diff", "--local", "--server-side", "-f", same, "-n", ns); strings.Contains(r.stderr, "may differ") {
		t.Errorf("an object whose owners are all in the file's version is warned of:\n%s", r.stderr)
	}
}
