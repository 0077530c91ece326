package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapply/kapply/internal/fixture"
	"github.com/kapply/kapply/internal/testcluster"
)

// TestDeleteTreeInOrder: a tree with a CRD, its custom resources and a
// Namespace is removed in one run: objects first, then the CRD, then the
// Namespace. (Without a controller manager a Namespace stays Terminating;
// the test checks it is being deleted.)
func TestDeleteTreeInOrder(t *testing.T) {
	testcluster.Require(t, cluster)
	ns, group := "deltree", "deltree.example.com"
	dir := writeFiles(t, map[string]string{
		"a-ns.yaml":  fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n", ns),
		"b-crd.yaml": fixture.WidgetCRD(group),
		"c-w1.yaml":  fixture.Widget(group, ns, "w1", ""),
		"d-w2.yaml":  fixture.Widget(group, ns, "w2", ""),
		"e-cm.yaml":  fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: %s}\n", ns),
	})
	if r := kapply(t, "apply", "-f", dir); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.stderr)
	}
	r := kapply(t, "delete", "-f", dir)
	want := fmt.Sprintf("widget.%[1]s \"w1\" deleted from %[2]s namespace\nwidget.%[1]s \"w2\" deleted from %[2]s namespace\nconfigmap \"cm\" deleted from %[2]s namespace\n"+
		"customresourcedefinition.apiextensions.k8s.io \"widgets.%[1]s\" deleted\nnamespace \"%[2]s\" deleted\n", group, ns)
	if r.code != 0 || r.stdout != want {
		t.Fatalf("delete: exit %d\n%s\nwant\n%s\n%s", r.code, r.stdout, want, r.stderr)
	}
	ctx := context.Background()
	widgets := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}
	if _, err := dynClient(t).Resource(widgets).Namespace(ns).Get(ctx, "w1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("widget w1: %v", err)
	}
	namespaces := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	live, err := dynClient(t).Resource(namespaces).Get(ctx, ns, metav1.GetOptions{})
	if err == nil && live.GetDeletionTimestamp() == nil {
		t.Errorf("namespace %s is not being deleted", ns)
	}
	again := kapply(t, "delete", "-f", dir)
	if again.code != exitFailed || !strings.Contains(again.stderr, "not found") {
		t.Errorf("second delete: exit %d\n%s", again.code, again.stderr)
	}
	ignoring := kapply(t, "delete", "-f", dir, "--ignore-not-found")
	if ignoring.code != 0 {
		t.Errorf("--ignore-not-found: exit %d\n%s", ignoring.code, ignoring.stderr)
	}
}

// TestDeleteDryRunAndWait: a dry run deletes nothing; --wait returns once
// the object is gone.
func TestDeleteDryRunAndWait(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n"})
	mustApply(t, dir, ns, "configmap/cm created\n")
	for _, mode := range []string{"client", "server"} {
		if r := kapply(t, "delete", "-f", dir, "-n", ns, "--dry-run="+mode); r.code != 0 || r.stdout != fmt.Sprintf("configmap \"cm\" deleted from %s namespace (%sdry run)\n", ns, map[string]string{"client": "", "server": "server "}[mode]) {
			t.Errorf("--dry-run=%s: exit %d\n%s\n%s", mode, r.code, r.stdout, r.stderr)
		}
	}
	if len(liveConfigMaps(t, ns)) != 1 {
		t.Fatalf("a dry run deleted the configmap")
	}
	if r := kapply(t, "delete", "-f", dir, "-n", ns, "--wait", "--timeout=20s"); r.code != 0 || r.stdout != fmt.Sprintf("configmap \"cm\" deleted from %s namespace\n", ns) {
		t.Errorf("--wait: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if len(liveConfigMaps(t, ns)) != 0 {
		t.Errorf("configmap still there after --wait")
	}
}

// TestDeleteLinesAsKubectl: kapply delete prints kubectl 1.37's lines
// (`configmap "cm" deleted from NS namespace`); compared with kubectl
// v1.37.1 itself when hack/kubectlcmd built it (bin/kubectlcmd/kubectl).
func TestDeleteLinesAsKubectl(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n"})
	for _, mode := range []string{"", "--dry-run=server"} {
		mustApply(t, dir, ns, "configmap/cm created\n")
		args := []string{"delete", "-f", dir, "-n", ns}
		if mode != "" {
			args = append(args, mode)
		}
		ours := kapply(t, args...)
		suffix := map[string]string{"": "", "--dry-run=server": " (server dry run)"}[mode]
		if want := fmt.Sprintf("configmap \"cm\" deleted from %s namespace%s\n", ns, suffix); ours.code != 0 || ours.stdout != want {
			t.Errorf("kapply %v: exit %d, stdout %q, want %q", args, ours.code, ours.stdout, want)
		}
		kubectl137, err := filepath.Abs("../../bin/kubectlcmd/kubectl")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(kubectl137); err != nil {
			continue
		}
		if mode == "" {
			mustApply(t, dir, ns, "configmap/cm created\n")
		}
		out, err := exec.Command(kubectl137, append(args, "--kubeconfig", cluster.Kubeconfig)...).Output()
		if err != nil || string(out) != ours.stdout {
			t.Errorf("kubectl v1.37.1 %v printed %q (%v), kapply %q", args, out, err, ours.stdout)
		}
	}
}
