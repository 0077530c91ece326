package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// waveConfigMap is a ConfigMap with a sync-wave annotation.
func waveConfigMap(name, wave string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name +
		"\n  annotations: {argocd.argoproj.io/sync-wave: \"" + wave + "\"}\ndata: {k: v}\n"
}

// TestWavesShownByPlanDiffAndEvents: the plan table, diff --explain and
// -o events say each object's wave and why; a saved plan keeps them and
// apply --plan runs them.
func TestWavesShownByPlanDiffAndEvents(t *testing.T) {
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"a.yaml": waveConfigMap("late", "1"), "b.yaml": waveConfigMap("early", "-1")})

	planFile := filepath.Join(t.TempDir(), "plan.json")
	r := mustRunKapply(t, "plan", "-f", dir, "-n", ns, "-o", planFile)
	for _, want := range []string{"WAVE", "0 (sync-wave -1)", "1 (sync-wave 1)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("plan table lacks %q:\n%s", want, r.stdout)
		}
	}
	if early, late := strings.Index(r.stdout, "early"), strings.Index(r.stdout, "late"); early < 0 || late < early {
		t.Errorf("plan table lists late before early:\n%s", r.stdout)
	}

	r = kapply(t, "diff", "--explain", "-f", dir, "-n", ns)
	if r.code != 1 || !strings.Contains(r.stdout, "# wave: 1 (sync-wave 1)") || !strings.Contains(r.stdout, "# wave: 0 (sync-wave -1)") {
		t.Errorf("diff --explain: exit %d, want 1 and each object's wave:\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	r = mustRunKapply(t, "apply", "--plan", planFile, "-f", dir, "-n", ns, "-o", "events")
	waves := map[string]float64{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("event line %q: %v", line, err)
		}
		obj, _ := ev["object"].(map[string]any)
		if wave, ok := ev["wave"].(float64); ok && obj != nil {
			waves[obj["name"].(string)] = wave
			if reason, _ := ev["waveReason"].(string); !strings.HasPrefix(reason, "sync-wave ") {
				t.Errorf("event of %v: waveReason %q", obj["name"], reason)
			}
		}
	}
	if waves["early"] != 0 || waves["late"] != 1 {
		t.Errorf("events' waves: %v, want early 0 and late 1\n%s", waves, r.stdout)
	}
}

// dependsOnConfigMap is a ConfigMap that depends on the objects named.
func dependsOnConfigMap(name, dependsOn string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name +
		"\n  annotations: {config.kubernetes.io/depends-on: \"" + dependsOn + "\"}\ndata: {k: v}\n"
}

// TestDependsOnOrdersAndRefuses: a depends-on edge sends the dependent
// after what it depends on (events' order and timestamps); one naming
// an object not in the run, a duplicate, or a cycle is refused with exit
// 1 before anything is written, naming the objects.
func TestDependsOnOrdersAndRefuses(t *testing.T) {
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{
		"a.yaml": dependsOnConfigMap("app", "/namespaces/"+ns+"/ConfigMap/db"),
		"b.yaml": configMapYAML("db", "k", "v"),
		"c.yaml": dependsOnConfigMap("web", "/namespaces/"+ns+"/ConfigMap/app"),
	})
	r := mustRunKapply(t, "apply", "-f", dir, "-n", ns, "-o", "events")
	var order []string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("event line %q: %v", line, err)
		}
		if obj, ok := ev["object"].(map[string]any); ok {
			order = append(order, obj["name"].(string))
			if obj["name"] == "web" && !strings.Contains(ev["waveReason"].(string), "depends-on") {
				t.Errorf("web's waveReason: %v", ev["waveReason"])
			}
		}
	}
	if len(order) != 3 {
		t.Fatalf("events of %v, want app, db and web\n%s", order, r.stdout)
	}
	// The order the server stored them in: etcd's revisions grow with
	// each write.
	var revisions []int
	for _, name := range []string{"db", "app", "web"} {
		live, err := dynamicClient(t).Resource(configMaps).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rv, _ := strconv.Atoi(live.GetResourceVersion())
		revisions = append(revisions, rv)
	}
	if !slices.IsSorted(revisions) {
		t.Errorf("resourceVersions of db, app, web: %v, want db written first, then app, then web", revisions)
	}

	for name, files := range map[string]map[string]string{
		"external":  {"a.yaml": dependsOnConfigMap("lonely", "/namespaces/"+ns+"/ConfigMap/missing"), "b.yaml": configMapYAML("other1", "k", "v")},
		"duplicate": {"a.yaml": dependsOnConfigMap("twice", "/namespaces/"+ns+"/ConfigMap/other2,/namespaces/"+ns+"/ConfigMap/other2"), "b.yaml": configMapYAML("other2", "k", "v")},
		"cycle":     {"a.yaml": dependsOnConfigMap("egg", "/namespaces/"+ns+"/ConfigMap/hen"), "b.yaml": dependsOnConfigMap("hen", "/namespaces/"+ns+"/ConfigMap/egg")},
	} {
		dir := writeFiles(t, files)
		r := kapply(t, "apply", "-f", dir, "-n", ns)
		if r.code != 1 || !strings.Contains(r.stderr, "a.yaml") {
			t.Errorf("%s: exit %d, want 1 and an error naming the file\nstdout %s\nstderr %s", name, r.code, r.stdout, r.stderr)
		}
		if strings.Contains(r.stdout, "created") {
			t.Errorf("%s: something was written: %s", name, r.stdout)
		}
		t.Logf("%s: %s", name, strings.TrimSpace(r.stderr))
	}
	for _, name := range []string{"lonely", "other1", "twice", "other2", "egg", "hen"} {
		if _, err := dynamicClient(t).Resource(configMaps).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{}); err == nil {
			t.Errorf("ConfigMap %s exists: a refused order wrote it", name)
		}
	}
}
