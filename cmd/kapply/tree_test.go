package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapply/kapply/internal/fixture"
	"github.com/kapply/kapply/internal/testcluster"
	"github.com/kapply/kapply/pkg/lastapplied"
)

// TestApplyTreeWithTwoCustomResourcesReappliesUnchanged: a CRD, two of its
// custom resources, a Namespace and objects inside it apply in one run, and
// the same run again reports every object unchanged.
func TestApplyTreeWithTwoCustomResourcesReappliesUnchanged(t *testing.T) {
	testcluster.Require(t, cluster)
	ns, group := "tree2", "tree2.example.com"
	dir := writeFiles(t, map[string]string{
		"crs/w1.yaml":    fixture.Widget(group, ns, "w1", "size: 1"),
		"crs/w2.yaml":    fixture.Widget(group, ns, "w2", "size: 2"),
		"app/cm.yaml":    fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: %s}\ndata: {a: b}\n", ns),
		"app/svc.yaml":   fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata: {name: svc, namespace: %s}\nspec: {ports: [{port: 80}]}\n", ns),
		"defs/crd.yaml":  fixture.WidgetCRD(group),
		"defs/ns.yaml":   fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n", ns),
		"defs/readme.md": "not a manifest, ignored by extension",
	})
	first := kapply(t, "apply", "-f", dir, "-R")
	if first.code != 0 || strings.Count(first.stdout, " created\n") != 6 {
		t.Fatalf("first run: exit %d\n%s\n%s", first.code, first.stdout, first.stderr)
	}
	second := kapply(t, "apply", "-f", dir, "-R")
	if second.code != 0 || strings.Count(second.stdout, " unchanged\n") != 6 {
		t.Errorf("second run: exit %d\n%s\n%s", second.code, second.stdout, second.stderr)
	}
	if !strings.Contains(second.stderr, "0 created, 0 configured, 6 unchanged, 0 failed") {
		t.Errorf("summary line missing: %s", second.stderr)
	}
}

// TestApplyManyObjectsOfOneResource goes through the LIST path (one LIST for
// the namespace's ConfigMaps instead of a GET each).
func TestApplyManyObjectsOfOneResource(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	files := map[string]string{}
	for i := range 12 {
		files[fmt.Sprintf("cm%02d.yaml", i)] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm%02d}\ndata: {i: \"%d\"}\n", i, i)
	}
	dir := writeFiles(t, files)
	if r := kapply(t, "apply", "-f", dir, "-n", ns); r.code != 0 || strings.Count(r.stdout, " created\n") != 12 {
		t.Fatalf("create: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	writeFile(t, dir, "cm05.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm05}\ndata: {i: \"changed\"}\n")
	r := kapply(t, "apply", "-f", dir, "-n", ns)
	if r.code != 0 || strings.Count(r.stdout, " unchanged\n") != 11 || !strings.Contains(r.stdout, "configmap/cm05 configured\n") {
		t.Fatalf("update: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	assertData(t, dynClient(t).Resource(configMaps).Namespace(ns), "cm05", map[string]any{"i": "changed"})
}

// TestApplyBigConfigMap: a 300 KiB ConfigMap, whose last-applied record would
// pass the 262144-byte annotation limit (kubectl fails: "Too long"), applies
// with a compact record, re-applies unchanged, and re-applies with one key
// removed: the key is gone from the live object.
func TestApplyBigConfigMap(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	value := strings.Repeat("0123456789abcdef", 100*1024/16)
	manifest := func(keys ...string) string {
		var b strings.Builder
		b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n")
		for _, k := range keys {
			fmt.Fprintf(&b, "  %s: %s%s\n", k, k, value)
		}
		return b.String()
	}
	dir := writeFiles(t, map[string]string{"big.yaml": manifest("a", "b", "c", "d")})
	r := kapply(t, "apply", "-f", dir, "-n", ns)
	if r.code != 0 || r.stdout != "configmap/big created\n" || !strings.Contains(r.stderr, lastapplied.CompactAnnotation) {
		t.Fatalf("create: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	mustApply(t, dir, ns, "configmap/big unchanged\n")
	writeFile(t, dir, "big.yaml", manifest("a", "c", "d"))
	mustApply(t, dir, ns, "configmap/big configured\n")
	live, err := dynClient(t).Resource(configMaps).Namespace(ns).Get(context.Background(), "big", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	data := live.Object["data"].(map[string]any)
	if _, ok := data["b"]; ok || len(data) != 3 {
		t.Errorf("live keys after removing b: %d keys, b present: %v", len(data), ok)
	}
	if _, ok := live.GetAnnotations()[lastapplied.Annotation]; ok {
		t.Errorf("a full last-applied annotation is on an object over the limit")
	}

	// Back under the limit: the full record returns, the compact one goes.
	writeFile(t, dir, "big.yaml", manifest("a"))
	mustApply(t, dir, ns, "configmap/big configured\n")
	live, err = dynClient(t).Resource(configMaps).Namespace(ns).Get(context.Background(), "big", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	annotations := live.GetAnnotations()
	if _, full := annotations[lastapplied.Annotation]; !full || annotations[lastapplied.CompactAnnotation] != "" || len(live.Object["data"].(map[string]any)) != 1 {
		t.Errorf("after shrinking: full record %v, compact record %q, %d keys", full, annotations[lastapplied.CompactAnnotation], len(live.Object["data"].(map[string]any)))
	}
}

// TestApplyInputs: -R walks nested directories, -k runs kustomize, - reads
// stdin, -l keeps only matching objects.
func TestApplyInputs(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{
		"deep/er/still/cm.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: nested, labels: {pick: \"yes\"}}\n",
		"top.yaml":                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: top}\n",
		"kust/kustomization.yaml": "namePrefix: k-\nresources: [cm.yaml]\n",
		"kust/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-kustomize}\n",
	})
	if r := kapply(t, "apply", "-f", dir, "-n", ns); r.code != 0 || r.stdout != "configmap/top created\n" {
		t.Errorf("without -R: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := kapply(t, "apply", "-f", filepath.Join(dir, "deep"), "-R", "-l", "pick=yes", "-n", ns); r.code != 0 || r.stdout != "configmap/nested created\n" {
		t.Errorf("-R -l: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := kapply(t, "apply", "-k", filepath.Join(dir, "kust"), "-n", ns); r.code != 0 || r.stdout != "configmap/k-from-kustomize created\n" {
		t.Errorf("-k: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r := kapplyWithStdin(t, strings.NewReader("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: piped}\n"), "apply", "-f", "-", "-n", ns)
	if r.code != 0 || r.stdout != "configmap/piped created\n" {
		t.Errorf("stdin: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestApplyDryRunWritesNothing: --dry-run=client and =server report what
// would happen, for a new object and a changed one, and write nothing.
func TestApplyDryRunWritesNothing(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: old}\ndata: {v: \"1\"}\n"})
	mustApply(t, dir, ns, "configmap/old created\n")
	writeFile(t, dir, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: old}\ndata: {v: \"2\"}\n")
	writeFile(t, dir, "new.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: new}\n")
	for mode, suffix := range map[string]string{"client": " (dry run)", "server": " (server dry run)"} {
		r := kapply(t, "apply", "-f", dir, "-n", ns, "--dry-run="+mode)
		want := "configmap/old configured" + suffix + "\nconfigmap/new created" + suffix + "\n"
		if r.code != 0 || r.stdout != want {
			t.Errorf("--dry-run=%s: exit %d\n%s\nwant\n%s\n%s", mode, r.code, r.stdout, want, r.stderr)
		}
	}
	assertData(t, dynClient(t).Resource(configMaps).Namespace(ns), "old", map[string]any{"v": "1"})
	if _, err := dynClient(t).Resource(configMaps).Namespace(ns).Get(context.Background(), "new", metav1.GetOptions{}); err == nil {
		t.Errorf("a dry run created configmap/new")
	}
	if r := kapply(t, "apply", "-f", dir, "-n", ns, "--dry-run=sometimes"); r.code != exitFailed {
		t.Errorf("bad --dry-run value: exit %d", r.code)
	}
}

// TestApplyDryRunOfCRDAndCustomResource: a client dry run maps custom
// resources from the run's CRD, which never reaches the server.
func TestApplyDryRunOfCRDAndCustomResource(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	group := "dryrun.example.com"
	dir := writeFiles(t, map[string]string{
		"crd.yaml": fixture.WidgetCRD(group),
		"w.yaml":   fixture.Widget(group, "", "w", "size: 1"),
	})
	r := kapply(t, "apply", "-f", dir, "-n", ns, "--dry-run=client")
	want := fmt.Sprintf("customresourcedefinition.apiextensions.k8s.io/widgets.%s created (dry run)\nwidget.%s/w created (dry run)\n", group, group)
	if r.code != 0 || r.stdout != want {
		t.Errorf("exit %d\n%s\nwant\n%s\n%s", r.code, r.stdout, want, r.stderr)
	}
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if _, err := dynClient(t).Resource(crds).Get(context.Background(), "widgets."+group, metav1.GetOptions{}); err == nil {
		t.Errorf("a dry run created the CRD")
	}
}

// TestApplyOutputFormats: -o name, yaml and json print what was applied.
func TestApplyOutputFormats(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n"})
	if r := kapply(t, "apply", "-f", dir, "-n", ns, "-o", "name"); r.stdout != "configmap/a\nconfigmap/b\n" {
		t.Errorf("-o name: %q", r.stdout)
	}
	if r := kapply(t, "apply", "-f", dir, "-n", ns, "-o", "yaml"); !strings.HasPrefix(r.stdout, "apiVersion: v1\nitems:\n") || !strings.Contains(r.stdout, "kind: List") || !strings.Contains(r.stdout, "resourceVersion:") {
		t.Errorf("-o yaml:\n%s", r.stdout)
	}
	one := filepath.Join(t.TempDir(), "one.yaml")
	writeFile(t, filepath.Dir(one), "one.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v}\n")
	if r := kapply(t, "apply", "-f", one, "-n", ns, "-o", "json"); !strings.HasPrefix(r.stdout, "{\n    \"apiVersion\": \"v1\",") || !strings.Contains(r.stdout, `"kind": "ConfigMap"`) {
		t.Errorf("-o json:\n%s", r.stdout)
	}
	if r := kapply(t, "apply", "-f", dir, "-o", "table"); r.code != exitFailed {
		t.Errorf("-o table: exit %d", r.code)
	}
}

// TestApplyNamespaceContradiction: an object whose namespace contradicts an
// explicit -n is an error, as in kubectl; the others still apply.
func TestApplyNamespaceContradiction(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{
		"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: elsewhere, namespace: kube-system}\n",
		"b.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: here}\n",
	})
	r := kapply(t, "apply", "-f", dir, "-n", ns)
	if r.code != exitFailed || r.stdout != "configmap/here created\n" || !strings.Contains(r.stderr, `does not match the namespace "`+ns+`"`) {
		t.Errorf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestApplyFromURL: -f takes an http(s) URL, as in kubectl.
func TestApplyFromURL(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if _, err := w.Write([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-url}\n")); err != nil {
			t.Errorf("serving manifest: %v", err)
		}
	}))
	defer server.Close()
	if r := kapply(t, "apply", "-f", server.URL+"/cm.yaml", "-n", ns); r.code != 0 || r.stdout != "configmap/from-url created\n" {
		t.Errorf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestApplyJSONAndList: JSON files and `kind: List` are read like YAML, each
// item of a List applied as its own object.
func TestApplyJSONAndList(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{
		"a.json": `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "from-json"}, "data": {"n": "1"}}`,
		"b.yaml": "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: item-1}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: item-2}}\n",
	})
	r := kapply(t, "apply", "-f", dir, "-n", ns)
	if r.code != 0 || r.stdout != "configmap/from-json created\nconfigmap/item-1 created\nconfigmap/item-2 created\n" {
		t.Errorf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
