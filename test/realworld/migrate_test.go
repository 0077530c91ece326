package realworld_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kapply/kapply/internal/fixture"
	"github.com/kapply/kapply/internal/testcluster"
)

// migrateProjects and migrateKinds are the subset of the corpus the
// migration is shown on (27 objects, well under two minutes under -race):
// the Deployments, ConfigMaps and Services of argo-cd, ingress-nginx and
// kube-state-metrics, each project in namespaces of its own.
var (
	migrateProjects = []string{"argo-cd", "ingress-nginx", "kube-state-metrics"}
	migrateKinds    = map[string]bool{"Deployment": true, "ConfigMap": true, "Service": true}
)

// Two labels every object is created with; the files drop them in turn.
const (
	dropLabel = "migrate.kapply.dev/drop"
	backLabel = "migrate.kapply.dev/back"
)

// TestMigrateRealWorld: objects made with kubectl create, then kubectl
// apply (client-side), both kubectl v1.37.1. The control: kubectl apply
// --server-side of a file without a label conflicts with kubectl-create
// (Deployments whose env uses fieldRef) and, forced, leaves the label
// (kubectl-create still owns it: kubernetes#99003). After kapply migrate --to=server-side
// (record dropped) the same apply removes it, with no conflict. The object
// then has no record, so client-side apply could not delete anything;
// kapply migrate --to=client-side writes one, and kubectl apply of a file
// without the second label removes that label.
func TestMigrateRealWorld(t *testing.T) {
	root := fixture.RealWorldDir(t)
	kubectl := kubectl137(t)
	for _, name := range migrateProjects {
		t.Run(name, func(t *testing.T) {
			objects, err := readObjects(filepath.Join(root, name))
			if err != nil {
				t.Fatal(err)
			}
			files := migrateFiles(t, objects)
			c := newClients(t)

			control := cluster.Namespace(t)
			mustRun(t, kubectl, "create", "-f", files.all, "-n", control)
			mustRun(t, kubectl, "apply", "-f", files.all, "-n", control)
			// kubectl-create owns fields the server defaulted inside atomic
			// values (env[].valueFrom.fieldRef gains apiVersion): without
			// migrate, kubectl apply --server-side conflicts on them.
			if out, code := runBin(t, kubectl, "apply", "--server-side", "-f", files.noDrop, "-n", control); code != 0 && !strings.Contains(out, `with "kubectl-create"`) {
				t.Fatalf("control: kubectl apply --server-side: exit %d without a conflict with kubectl-create:\n%s", code, out)
			} else if code != 0 {
				t.Logf("control: kubectl apply --server-side conflicts with kubectl-create:\n%s", out)
			}
			mustRun(t, kubectl, "apply", "--server-side", "--force-conflicts", "-f", files.noDrop, "-n", control)
			for _, obj := range files.objects {
				if !hasLabel(t, c, obj, control, dropLabel) {
					t.Errorf("control: %s lost %s without migrate; the leak this test shows is gone", ref(obj), dropLabel)
				}
			}

			ns := cluster.Namespace(t)
			mustRun(t, kubectl, "create", "-f", files.all, "-n", ns)
			mustRun(t, kubectl, "apply", "-f", files.all, "-n", ns)
			plan := mustRun(t, kapplyBin, "migrate", "--to=server-side", "--dry-run=server", "--keep-last-applied=false", "-f", files.all, "-n", ns)
			if n := strings.Count(plan, " migrated (server dry run)\n"); n != len(files.objects) {
				t.Errorf("dry run: %d objects migrated, want %d\n%s", n, len(files.objects), plan)
			}
			mustRun(t, kapplyBin, "migrate", "--to=server-side", "--keep-last-applied=false", "-f", files.all, "-n", ns)
			if out := mustRun(t, kubectl, "apply", "--server-side", "-f", files.noDrop, "-n", ns); strings.Contains(out, "onflict") {
				t.Errorf("kubectl apply --server-side after migrate reported conflicts:\n%s", out)
			}
			for _, obj := range files.objects {
				live := get(t, c, obj, ns)
				if _, has := live.GetLabels()[dropLabel]; has {
					t.Errorf("%s keeps %s after migrate and a server-side apply without it", ref(obj), dropLabel)
				}
				if _, has := live.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"]; has {
					t.Errorf("%s keeps its record after --keep-last-applied=false", ref(obj))
				}
			}

			mustRun(t, kapplyBin, "migrate", "--to=client-side", "-f", files.noDrop, "-n", ns)
			mustRun(t, kubectl, "apply", "-f", files.noBack, "-n", ns)
			for _, obj := range files.objects {
				if hasLabel(t, c, obj, ns, backLabel) {
					t.Errorf("%s keeps %s after migrate --to=client-side and a client-side apply without it", ref(obj), backLabel)
				}
			}
		})
	}
}

// migrateFileSet is one project's objects with both labels (all), without
// dropLabel (noDrop) and without either (noBack).
type migrateFileSet struct {
	objects             []*unstructured.Unstructured
	all, noDrop, noBack string
}

func migrateFiles(t *testing.T, objects []*unstructured.Unstructured) migrateFileSet {
	t.Helper()
	var set migrateFileSet
	for _, obj := range objects {
		if migrateKinds[obj.GetKind()] {
			obj = obj.DeepCopy()
			obj.SetNamespace("")
			set.objects = append(set.objects, obj)
		}
	}
	dir := t.TempDir()
	write := func(name string, labels ...string) string {
		var docs []string
		for _, obj := range set.objects {
			obj = obj.DeepCopy()
			l := obj.GetLabels()
			if l == nil {
				l = map[string]string{}
			}
			for _, k := range labels {
				l[k] = "x"
			}
			obj.SetLabels(l)
			data, err := yaml.Marshal(obj.Object)
			if err != nil {
				t.Fatal(err)
			}
			docs = append(docs, string(data))
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(strings.Join(docs, "---\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	set.all, set.noDrop, set.noBack = write("all.yaml", dropLabel, backLabel), write("nodrop.yaml", backLabel), write("noback.yaml")
	return set
}

func kubectl137(t *testing.T) string {
	t.Helper()
	return testcluster.Kubectl137(t)
}

// mustRun runs bin against the cluster and returns its output; a failure
// ends the test.
func mustRun(t *testing.T, bin string, args ...string) string {
	t.Helper()
	out, code := runBin(t, bin, args...)
	if code != 0 {
		t.Fatalf("%s %s: exit %d\n%s", filepath.Base(bin), strings.Join(args, " "), code, out)
	}
	return out
}

// runBin runs bin against the cluster: its output and exit code.
func runBin(t *testing.T, bin string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, append(args, "--kubeconfig", cluster.Kubeconfig)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return out.String(), exit.ExitCode()
	case err != nil:
		t.Fatalf("%s %s: %v", filepath.Base(bin), strings.Join(args, " "), err)
	}
	return out.String(), 0
}

func get(t *testing.T, c clients, obj *unstructured.Unstructured, ns string) *unstructured.Unstructured {
	t.Helper()
	gvk := obj.GroupVersionKind()
	mapping, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		t.Fatalf("mapping %s: %v", gvk, err)
	}
	live, err := c.dynamic.Resource(mapping.Resource).Namespace(ns).Get(context.Background(), obj.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading %s: %v", ref(obj), err)
	}
	return live
}

func hasLabel(t *testing.T, c clients, obj *unstructured.Unstructured, ns, label string) bool {
	t.Helper()
	_, has := get(t, c, obj, ns).GetLabels()[label]
	return has
}
