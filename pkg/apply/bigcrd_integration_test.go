package apply_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"

	"github.com/kapply/kapply/internal/fixture"
	"github.com/kapply/kapply/pkg/apply"
	kcluster "github.com/kapply/kapply/pkg/cluster"
	"github.com/kapply/kapply/pkg/lastapplied"
)

var crds = k8sschema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// bigCRDName is the generated CRD's name; CRDs are cluster-scoped, so the
// test deletes it when done.
const bigCRDName = "bigthings.big.kapply.test"

// bigCRDEdit is what a later version of the file changes.
type bigCRDEdit struct {
	addProperty, removeProperty, v2NotServed, dropCategories, dropLabel bool
}

// bigCRD is a CRD whose last-applied record is about 400 KiB: two versions
// of a schema of 700 described properties, some nested, as generated CRDs
// are. Everything of it sits in spec.versions.
func bigCRD(edit bigCRDEdit) *unstructured.Unstructured {
	labels := map[string]any{"app": "big", "tier": "schema"}
	if edit.dropLabel {
		delete(labels, "tier")
	}
	names := map[string]any{"kind": "Bigthing", "plural": "bigthings", "singular": "bigthing", "categories": []any{"big"}}
	if edit.dropCategories {
		delete(names, "categories")
	}
	v1, v2 := bigVersion("v1", true, true, edit), bigVersion("v2", !edit.v2NotServed, false, bigCRDEdit{})
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": bigCRDName, "labels": labels},
		"spec": map[string]any{
			"group": "big.kapply.test", "scope": "Namespaced", "names": names,
			"versions": []any{v1, v2},
		},
	}}
}

func bigVersion(name string, served, storage bool, edit bigCRDEdit) map[string]any {
	props := map[string]any{}
	for i := range 700 {
		props[fmt.Sprintf("prop%04d", i)] = bigProperty(i)
	}
	if edit.addProperty {
		props["added"] = map[string]any{"type": "string", "description": "A property the second version of the file adds."}
	}
	if edit.removeProperty {
		delete(props, "prop0003")
	}
	return map[string]any{
		"name": name, "served": served, "storage": storage,
		"schema": map[string]any{"openAPIV3Schema": map[string]any{
			"type": "object",
			"properties": map[string]any{"spec": map[string]any{
				"type": "object", "description": "The desired state of the " + name + " Bigthing.", "properties": props,
			}},
		}},
	}
}

func bigProperty(i int) map[string]any {
	desc := fmt.Sprintf("Prop%04d sets the %d-th knob of the thing. When unset, the operator picks a default "+
		"that depends on the cluster; see the documentation of knob %d for the values it accepts and what each means.", i, i, i)
	if i%5 != 0 {
		return map[string]any{"type": "string", "description": desc}
	}
	return map[string]any{"type": "object", "description": desc, "properties": map[string]any{
		"enabled": map[string]any{"type": "boolean", "description": fmt.Sprintf("Whether knob %d is on. Defaults to false, which leaves the rest of this object unused.", i)},
		"mode":    map[string]any{"type": "string", "enum": []any{"Auto", "Manual", "Off"}, "description": fmt.Sprintf("How knob %d is driven: Auto follows the load, Manual keeps the value set here.", i)},
	}}
}

// writeObject writes obj as the world's file.
func writeObject(t *testing.T, w *world, obj *unstructured.Unstructured) string {
	t.Helper()
	out, err := yaml.Marshal(obj.Object)
	if err != nil {
		t.Fatal(err)
	}
	return writeManifest(t, w, string(out))
}

func deleteCRDWhenDone(t *testing.T, name string) {
	t.Helper()
	t.Cleanup(func() {
		err := dyn(t).Resource(crds).Delete(context.Background(), name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting CRD %s: %v", name, err)
		}
	})
}

func wantOutcome(t *testing.T, events []apply.Event, want apply.Outcome) {
	t.Helper()
	failOnFailures(t, events)
	for _, ev := range events {
		if ev.Outcome != want {
			t.Errorf("%s %s, want %s", apply.ObjectRef(ev.Object), ev.Outcome, want)
		}
	}
}

// wantCompactRecord checks that live carries the compact record only, and
// that it reads back as exactly the full record of file.
func wantCompactRecord(t *testing.T, live, file *unstructured.Unstructured) {
	t.Helper()
	annotations := live.GetAnnotations()
	full, err := lastapplied.Encode(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, has := annotations[lastapplied.Annotation]; has {
		t.Errorf("%s carries kubectl's record too", live.GetName())
	}
	compact, ok := annotations[lastapplied.CompactAnnotation]
	if !ok {
		t.Fatalf("%s has no compact record", live.GetName())
	}
	t.Logf("%s: full record %d bytes, compact %d bytes", live.GetName(), len(full), len(compact))
	got, err := lastapplied.Read(live)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := json.Unmarshal(full, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: the compact record is not the full record", live.GetName())
	}
}

// TestBigCRD: a CRD whose record passes the 262144-byte annotation limit
// (where kubectl apply fails) applies with a compact record, re-applies
// unchanged, takes edits of its schema, deletes what the file drops, and
// keeps what another writer set.
func TestBigCRD(t *testing.T) {
	requireCluster(t)
	w := newWorld(t, kapplyTool, nil)
	deleteCRDWhenDone(t, bigCRDName)
	crd := objRef{crds, bigCRDName}
	first := bigCRD(bigCRDEdit{})
	if full, err := lastapplied.Encode(first); err != nil || len(full) < 350*1024 || len(full) > 450*1024 {
		t.Fatalf("the generated CRD's record is %d bytes (err %v), want about 400 KiB", len(full), err)
	}

	wantOutcome(t, kapplyRun(t, w, writeObject(t, w, first)), apply.Created)
	wantCompactRecord(t, getCluster(t, crd), first)
	wantOutcome(t, kapplyRun(t, w, w.lastFile), apply.Unchanged)

	patchCluster(t, crd, `{"metadata":{"labels":{"owner":"other"}},"spec":{"names":{"shortNames":["bt"]}}}`)
	edited := bigCRD(bigCRDEdit{addProperty: true, removeProperty: true, v2NotServed: true, dropCategories: true, dropLabel: true})
	wantOutcome(t, kapplyRun(t, w, writeObject(t, w, edited)), apply.Configured)
	live := getCluster(t, crd)
	wantCompactRecord(t, live, edited)
	v1Props := []string{"spec", "versions", "[name=v1]", "schema", "openAPIV3Schema", "properties", "spec", "properties"}
	wantField(t, live, "string", append(v1Props, "added", "type")...)
	wantField(t, live, nil, append(v1Props, "prop0003")...)
	wantField(t, live, "object", append(v1Props, "prop0005", "type")...)
	wantField(t, live, false, "spec", "versions", "[name=v2]", "served")
	wantField(t, live, nil, "spec", "names", "categories")
	wantField(t, live, nil, "metadata", "labels", "tier")
	wantField(t, live, []any{"bt"}, "spec", "names", "shortNames")
	wantField(t, live, "other", "metadata", "labels", "owner")

	wantOutcome(t, kapplyRun(t, w, w.lastFile), apply.Unchanged)
	wantDiffClean(t, w)
}

// TestRealCRDPastTheLimit applies prometheus-operator's Prometheus CRD
// (a 485 KB record) from the real-world corpus, when it is there.
func TestRealCRDPastTheLimit(t *testing.T) {
	requireCluster(t)
	path := filepath.Join(fixture.RealWorldDir(t), "prometheus-operator", "monitoring.coreos.com_prometheuses.yaml")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("no real-world corpus: %v", err)
	}
	w := newWorld(t, kapplyTool, nil)
	w.lastFile = path
	deleteCRDWhenDone(t, "prometheuses.monitoring.coreos.com")
	wantOutcome(t, kapplyRun(t, w, path), apply.Created)
	wantOutcome(t, kapplyRun(t, w, path), apply.Unchanged)
	live := getCluster(t, objRef{crds, "prometheuses.monitoring.coreos.com"})
	if _, ok := live.GetAnnotations()[lastapplied.CompactAnnotation]; !ok {
		t.Errorf("no compact record")
	}
	wantDiffClean(t, w)
}

// TestNormalObjectKeepsKubectlsRecord: under the limit the record is
// kubectl's, byte for byte (compared with kubectl's own when installed).
func TestNormalObjectKeepsKubectlsRecord(t *testing.T) {
	requireCluster(t)
	const manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: small, labels: {app: web}}\ndata: {b: \"2\", a: \"1\"}\n"
	w := newWorld(t, kapplyTool, nil)
	applyFile(manifest).run(t, w)
	live := get(t, w, objRef{configMaps, "small"})
	want := `{"apiVersion":"v1","data":{"a":"1","b":"2"},"kind":"ConfigMap","metadata":{"annotations":{},"labels":{"app":"web"},"name":"small","namespace":"` + w.ns + `"}}` + "\n"
	if got := live.GetAnnotations()[lastapplied.Annotation]; got != want {
		t.Errorf("record\n%q\nwant\n%q", got, want)
	}
	if _, has := live.GetAnnotations()[lastapplied.CompactAnnotation]; has {
		t.Errorf("a compact record under the limit")
	}
	if !haveKubectl(t) {
		return
	}
	k := newWorld(t, kubectlTool, nil)
	applyFile(manifest).run(t, k)
	theirs := get(t, k, objRef{configMaps, "small"}).GetAnnotations()[lastapplied.Annotation]
	if strings.ReplaceAll(theirs, k.ns, w.ns) != live.GetAnnotations()[lastapplied.Annotation] {
		t.Errorf("kapply's record\n%s\nkubectl's\n%s", live.GetAnnotations()[lastapplied.Annotation], theirs)
	}
}

// wantDiffClean runs `kapply diff` (the CLI, built from cmd/kapply) on the
// world's last file and wants exit 0: no differences. Without the go tool
// it checks the server dry run the command is made of.
func wantDiffClean(t *testing.T, w *world) {
	t.Helper()
	opts := fileRun{w.lastFile, apply.Options{Write: apply.WriteOptions{Namespace: w.ns}, DryRun: kcluster.ServerDryRun}}
	wantOutcome(t, kapplyRunOpts(t, w, opts), apply.Unchanged)
	bin := kapplyBinary(t)
	if bin == "" {
		return
	}
	cmd := exec.Command(bin, "diff", "-f", w.lastFile, "-n", w.ns, "--kubeconfig", cluster.Kubeconfig, "--cache-dir", w.cacheDir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("kapply diff: %v\n%.2000s", err, out)
	}
}

// kapplyBinary builds cmd/kapply once per test binary; "" without the go
// tool.
func kapplyBinary(t *testing.T) string {
	t.Helper()
	builtKapply.once.Do(func() {
		if _, err := exec.LookPath("go"); err != nil {
			return
		}
		dir, err := os.MkdirTemp("", "kapply-bin-")
		if err != nil {
			builtKapply.err = err
			return
		}
		bin := filepath.Join(dir, "kapply")
		if out, err := exec.Command("go", "build", "-o", bin, "github.com/kapply/kapply/cmd/kapply").CombinedOutput(); err != nil {
			builtKapply.err = fmt.Errorf("%w\n%s", err, out)
			return
		}
		builtKapply.path = bin
	})
	if builtKapply.err != nil {
		t.Fatalf("building kapply: %v", builtKapply.err)
	}
	return builtKapply.path
}

var builtKapply struct {
	once sync.Once
	path string
	err  error
}

func getCluster(t *testing.T, ref objRef) *unstructured.Unstructured {
	t.Helper()
	u, err := dyn(t).Resource(ref.gvr).Get(context.Background(), ref.name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading %s: %v", ref, err)
	}
	return u
}

// patchCluster is another writer's merge patch of a cluster-scoped object.
func patchCluster(t *testing.T, ref objRef, body string) {
	t.Helper()
	_, err := dyn(t).Resource(ref.gvr).Patch(context.Background(), ref.name, types.MergePatchType, []byte(body), metav1.PatchOptions{FieldManager: otherWriter})
	if err != nil {
		t.Fatalf("another writer patching %s: %v", ref, err)
	}
}
