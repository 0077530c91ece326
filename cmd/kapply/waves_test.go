package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
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
