package main

import (
	"strings"
	"testing"

	"github.com/kapply/kapply/internal/testcluster"
	"github.com/kapply/kapply/pkg/lastapplied"
)

const recordedConfigMap = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  labels: {app: shop}\ndata:\n  color: blue\n  size: \"3\"\n"

// TestLastAppliedSetMatchesKubectl: kapply last-applied set writes the bytes
// kubectl apply set-last-applied writes, each tool's view prints the same,
// and either reads what the other wrote.
func TestLastAppliedSetMatchesKubectl(t *testing.T) {
	testcluster.Require(t, cluster)
	requireKubectl(t)
	ours, theirs := cluster.Namespace(t), cluster.Namespace(t)
	created := writeFiles(t, map[string]string{"cm.yaml": recordedConfigMap})
	changed := writeFiles(t, map[string]string{"cm.yaml": strings.Replace(recordedConfigMap, "blue", "red", 1)})
	for _, ns := range []string{ours, theirs} {
		mustRun(t, "apply", "-f", created, "-n", ns)
	}

	r := mustRun(t, "last-applied", "set", "-f", changed, "-n", ours)
	if r.stdout != "configmap/cfg configured\n" {
		t.Errorf("set output: %q", r.stdout)
	}
	kubectl(t, "apply", "set-last-applied", "-f", changed, "-n", theirs)
	ourRecord := liveObject(t, configMaps, ours, "cfg").GetAnnotations()[lastapplied.Annotation]
	theirRecord := liveObject(t, configMaps, theirs, "cfg").GetAnnotations()[lastapplied.Annotation]
	if strings.ReplaceAll(ourRecord, ours, theirs) != theirRecord {
		t.Errorf("records differ\n kapply: %q\nkubectl: %q", ourRecord, theirRecord)
	}
	for _, format := range []string{"yaml", "json"} {
		kubectlView := kubectl(t, "apply", "view-last-applied", "configmap/cfg", "-n", ours, "-o", format)
		kapplyView := mustRun(t, "last-applied", "view", "configmap/cfg", "-n", theirs, "-o", format).stdout
		if strings.ReplaceAll(kubectlView, ours, theirs) != kapplyView || !strings.Contains(kapplyView, "red") {
			t.Errorf("-o %s: kubectl view of kapply's record differs from kapply view of kubectl's\nkubectl:\n%s\nkapply:\n%s", format, kubectlView, kapplyView)
		}
	}
	if again := mustRun(t, "last-applied", "set", "-f", changed, "-n", ours); again.stdout != "configmap/cfg unchanged\n" {
		t.Errorf("setting the same record again: %q", again.stdout)
	}
	fromFile := mustRun(t, "last-applied", "view", "-f", changed, "-n", ours, "-o", "json")
	if !strings.Contains(fromFile.stdout, `"color": "red"`) {
		t.Errorf("view -f:\n%s", fromFile.stdout)
	}
}

// TestLastAppliedSetCreateAnnotation: an object without a record needs
// --create-annotation, as in kubectl.
func TestLastAppliedSetCreateAnnotation(t *testing.T) {
	testcluster.Require(t, cluster)
	requireKubectl(t)
	ns := cluster.Namespace(t)
	kubectl(t, "create", "configmap", "cfg", "--from-literal=color=blue", "-n", ns)
	dir := writeFiles(t, map[string]string{"cm.yaml": recordedConfigMap})
	r := kapply(t, "last-applied", "set", "-f", dir, "-n", ns)
	if r.code != exitError || !strings.Contains(r.stderr, "--create-annotation") {
		t.Errorf("without --create-annotation: exit %d, %q", r.code, r.stderr)
	}
	mustRun(t, "last-applied", "set", "-f", dir, "-n", ns, "--create-annotation")
	if got := kubectl(t, "apply", "view-last-applied", "configmap/cfg", "-n", ns); !strings.Contains(got, "color: blue") {
		t.Errorf("kubectl view after set --create-annotation:\n%s", got)
	}
}

// TestLastAppliedEdit edits the record with $KUBE_EDITOR; kubectl sees it.
func TestLastAppliedEdit(t *testing.T) {
	testcluster.Require(t, cluster)
	requireKubectl(t)
	ns := cluster.Namespace(t)
	mustRun(t, "apply", "-f", writeFiles(t, map[string]string{"cm.yaml": recordedConfigMap}), "-n", ns)
	t.Setenv("KUBE_EDITOR", "sed -i s/blue/green/")
	r := mustRun(t, "last-applied", "edit", "configmap/cfg", "-n", ns)
	if r.stdout != "configmap/cfg edited\n" {
		t.Errorf("edit output: %q", r.stdout)
	}
	if got := kubectl(t, "apply", "view-last-applied", "configmap/cfg", "-n", ns); !strings.Contains(got, "color: green") {
		t.Errorf("kubectl view after edit:\n%s", got)
	}
	t.Setenv("KUBE_EDITOR", "true")
	if r := mustRun(t, "last-applied", "edit", "configmap/cfg", "-n", ns); r.stdout != "configmap/cfg unchanged\n" {
		t.Errorf("edit without a change: %q", r.stdout)
	}
}

// TestLastAppliedViewBadInput: a missing object or one without a record is
// exit 2.
func TestLastAppliedViewBadInput(t *testing.T) {
	testcluster.Require(t, cluster)
	requireKubectl(t)
	ns := cluster.Namespace(t)
	kubectl(t, "create", "configmap", "bare", "-n", ns)
	for args, want := range map[string]string{
		"configmap/nowhere": `"nowhere" not found`,
		"configmap/bare":    "no last-applied-configuration annotation found on resource: bare",
	} {
		r := kapply(t, "last-applied", "view", args, "-n", ns)
		if r.code != exitError || !strings.Contains(r.stderr, want) {
			t.Errorf("view %s: exit %d, stderr %q, want %q", args, r.code, r.stderr, want)
		}
	}
}
