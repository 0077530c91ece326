package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kapply/kapply/internal/testcluster"
	"github.com/kapply/kapply/pkg/lastapplied"
)

// TestAdoptImperativeConfigMap is the doc's "from imperative commands to
// declarative files": a ConfigMap made with kubectl create is adopted, which
// changes nothing but the record; then a label removed from the file is
// removed from the object by the next apply.
func TestAdoptImperativeConfigMap(t *testing.T) {
	testcluster.Require(t, cluster)
	requireKubectl(t)
	ns := cluster.Namespace(t)
	kubectl(t, "create", "configmap", "settings", "--from-literal=mode=fast", "-n", ns)
	kubectl(t, "label", "configmap", "settings", "team=shop", "tier=web", "-n", ns)
	file := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  labels: {team: shop, tier: web}\ndata:\n  mode: fast\n"
	dir := writeFiles(t, map[string]string{"cm.yaml": file})
	before := liveObject(t, configMaps, ns, "settings")

	dry := mustRun(t, "adopt", "-f", dir, "-n", ns, "--dry-run")
	if !strings.HasPrefix(dry.stdout, "configmap/settings adopted (dry run)\n") {
		t.Errorf("dry run output:\n%s", dry.stdout)
	}
	if _, has := liveObject(t, configMaps, ns, "settings").GetAnnotations()[lastapplied.Annotation]; has {
		t.Fatal("a dry run recorded the file")
	}

	r := mustRun(t, "adopt", "-f", dir, "-n", ns)
	if r.stdout != "configmap/settings adopted\n  the next apply changes nothing\n" {
		t.Errorf("adopt output:\n%s", r.stdout)
	}
	after := liveObject(t, configMaps, ns, "settings")
	if !reflect.DeepEqual(after.GetLabels(), before.GetLabels()) || !reflect.DeepEqual(after.Object["data"], before.Object["data"]) {
		t.Errorf("adopt changed more than the record: labels %v data %v", after.GetLabels(), after.Object["data"])
	}
	if got := kubectl(t, "apply", "view-last-applied", "configmap/settings", "-n", ns); !strings.Contains(got, "tier: web") {
		t.Errorf("kubectl does not see the adopted record:\n%s", got)
	}
	again := mustRun(t, "adopt", "-f", dir, "-n", ns)
	if !strings.Contains(again.stderr, "configmap/settings skipped") {
		t.Errorf("adopting again: want skipped, got:\n%s%s", again.stdout, again.stderr)
	}

	dropped := writeFiles(t, map[string]string{"cm.yaml": strings.Replace(file, ", tier: web", "", 1)})
	if r := mustRun(t, "apply", "-f", dropped, "-n", ns); r.stdout != "configmap/settings configured\n" {
		t.Errorf("apply output: %s", r.stdout)
	}
	if labels := liveObject(t, configMaps, ns, "settings").GetLabels(); !reflect.DeepEqual(labels, map[string]string{"team": "shop"}) {
		t.Errorf("labels after apply: %v, want only team=shop (tier deleted)", labels)
	}
}

// TestAdoptReportsWhatApplyWillChange: fields where live differs from the
// file are listed; a missing object is exit 2 and changes nothing.
func TestAdoptReportsWhatApplyWillChange(t *testing.T) {
	testcluster.Require(t, cluster)
	requireKubectl(t)
	ns := cluster.Namespace(t)
	kubectl(t, "create", "configmap", "settings", "--from-literal=mode=fast", "--from-literal=extra=1", "-n", ns)
	dir := writeFiles(t, map[string]string{
		"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {mode: slow}\n",
	})
	r := mustRun(t, "adopt", "-f", dir, "-n", ns)
	if !strings.Contains(r.stdout, `data.mode: "fast" -> "slow" (set by file)`) || strings.Contains(r.stdout, "extra") {
		t.Errorf("adopt output:\n%s", r.stdout)
	}
	missing := writeFiles(t, map[string]string{
		"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\n",
	})
	kubectl(t, "create", "configmap", "fresh", "-n", ns)
	both := writeFiles(t, map[string]string{
		"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fresh}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\n",
	})
	for _, d := range []string{missing, both} {
		bad := kapply(t, "adopt", "-f", d, "-n", ns)
		if bad.code != exitError || !strings.Contains(bad.stderr, "configmap/other -n "+ns) || !strings.Contains(bad.stderr, "): not found") {
			t.Errorf("adopting a missing object: exit %d, stderr %q", bad.code, bad.stderr)
		}
	}
	if _, has := liveObject(t, configMaps, ns, "fresh").GetAnnotations()[lastapplied.Annotation]; has {
		t.Error("a failed adopt recorded a file on another object of the run")
	}
}
