package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapply/kapply/internal/testcluster"
	"github.com/kapply/kapply/pkg/lastapplied"
)

// The server refuses an object whose annotations pass 256 KiB in all. b
// carries a 200 KB annotation of its own; a 100 KB record on top of it is
// refused, while the same record on a or c is written.
var (
	filler    = strings.Repeat("f", 200_000)
	bigRecord = strings.Repeat("r", 100_000)
)

// threeConfigMaps is one file with a, b and c in this order; b's data is
// bData.
func threeConfigMaps(bData string) string {
	var docs []string
	for _, name := range []string{"a", "b", "c"} {
		data := "x"
		if name == "b" {
			data = bData
		}
		docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\ndata: {color: %s}\n", name, data))
	}
	return strings.Join(docs, "---\n")
}

// addFiller gives b its large annotation.
func addFiller(t *testing.T, ns string) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata": {"annotations": {"filler": %q}}}`, filler)
	if _, err := dynClient(t).Resource(configMaps).Namespace(ns).Patch(context.Background(), "b", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

func recordOf(t *testing.T, ns, name string) string {
	t.Helper()
	return liveObject(t, configMaps, ns, name).GetAnnotations()[lastapplied.Annotation]
}

// assertWroteAroundB checks that a and c were written and reported, b's
// failure reported, and the exit code 1.
func assertWroteAroundB(t *testing.T, what string, r result, verb string) {
	t.Helper()
	for _, name := range []string{"a", "c"} {
		if !strings.Contains(r.stdout, "configmap/"+name+" "+verb+"\n") {
			t.Errorf("%s: configmap/%s not %s:\n%s\n%s", what, name, verb, r.stdout, r.stderr)
		}
	}
	if r.code != exitFailed || !strings.Contains(r.stderr, "error: configmap/b -n ") || strings.Contains(r.stdout, "configmap/b "+verb) ||
		!strings.Contains(r.stderr, "1 of 3 object(s)") {
		t.Errorf("%s: exit %d, want %d with b's error\nstdout:\n%s\nstderr:\n%s", what, r.code, exitFailed, r.stdout, r.stderr)
	}
}

// TestAdoptGoesOnAfterAFailedWrite: the server refuses b's record; a before
// it and c after it are adopted, each reported, and the exit code is 1.
func TestAdoptGoesOnAfterAFailedWrite(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	for _, name := range []string{"a", "b", "c"} {
		cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name}, "data": map[string]any{"color": "x"}}}
		if _, err := dynClient(t).Resource(configMaps).Namespace(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	addFiller(t, ns)
	dir := writeFiles(t, map[string]string{"cms.yaml": threeConfigMaps(bigRecord)})
	r := kapply(t, "adopt", "-f", dir, "-n", ns)
	assertWroteAroundB(t, "adopt", r, "adopted")
	if recordOf(t, ns, "a") == "" || recordOf(t, ns, "c") == "" || recordOf(t, ns, "b") != "" {
		t.Errorf("records: a %t, b %t, c %t; want a and c only", recordOf(t, ns, "a") != "", recordOf(t, ns, "b") != "", recordOf(t, ns, "c") != "")
	}
}

// TestLastAppliedSetGoesOnAfterAFailedWrite: as adopt, for last-applied set.
func TestLastAppliedSetGoesOnAfterAFailedWrite(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	mustRun(t, "apply", "-f", writeFiles(t, map[string]string{"cms.yaml": threeConfigMaps("x")}), "-n", ns)
	addFiller(t, ns)
	changed := strings.ReplaceAll(threeConfigMaps(bigRecord), "color: x", "color: green")
	r := kapply(t, "last-applied", "set", "-f", writeFiles(t, map[string]string{"cms.yaml": changed}), "-n", ns)
	assertWroteAroundB(t, "last-applied set", r, "configured")
	for name, want := range map[string]string{"a": `"color":"green"`, "b": `"color":"x"`, "c": `"color":"green"`} {
		if got := recordOf(t, ns, name); !strings.Contains(got, want) {
			t.Errorf("record of %s: %s, want %s", name, got, want)
		}
	}
}

// TestLastAppliedEditGoesOnAfterAFailedWrite: the editor makes b's record
// too large; a and c are edited, each reported, and the exit code is 1.
func TestLastAppliedEditGoesOnAfterAFailedWrite(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	mustRun(t, "apply", "-f", writeFiles(t, map[string]string{"cms.yaml": threeConfigMaps("x")}), "-n", ns)
	addFiller(t, ns)
	editor := filepath.Join(t.TempDir(), "editor")
	body := fmt.Sprintf("#!/bin/sh\nif grep -q '^  name: b$' \"$1\"; then sed -i 's/color: x/color: %s/' \"$1\"; else sed -i 's/color: x/color: green/' \"$1\"; fi\n", bigRecord)
	if err := os.WriteFile(editor, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBE_EDITOR", editor)
	r := kapply(t, "last-applied", "edit", "configmap/a", "configmap/b", "configmap/c", "-n", ns)
	assertWroteAroundB(t, "last-applied edit", r, "edited")
	for name, want := range map[string]string{"a": `"color":"green"`, "b": `"color":"x"`, "c": `"color":"green"`} {
		if got := recordOf(t, ns, name); !strings.Contains(got, want) {
			t.Errorf("record of %s: %.80s, want %s", name, got, want)
		}
	}
}
