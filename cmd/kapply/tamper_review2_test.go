package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/plan"
)

// TestApplyPlanRefusesForgedKeptLive: a plan's keptLive (the fields ignore
// rules keep at their live values) is not given by the files, yet the
// tamper check took it from the plan: an editor who adds data.ctrl (a
// field another writer set, no file declares) to it and writes data.ctrl
// into the patch's last-applied record passes the check, and the next
// plain apply of the same files deletes data.ctrl. A keptLive that the run
// cannot reproduce (apply --plan takes no ignore rules) is refused.
func TestApplyPlanRefusesForgedKeptLive(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := context.Background()
	dir := writeFiles(t, map[string]string{"cm.yaml": configMapYAML("web", "mode", "slow")})
	mustRunKapply(t, "apply", "-f", dir, "-n", ns)
	cms := dynamicClient(t).Resource(configMaps).Namespace(ns)
	if _, err := cms.Patch(ctx, "web", types.MergePatchType, []byte(`{"data":{"ctrl":"x"}}`), metav1.PatchOptions{FieldManager: "controller"}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "cm.yaml", configMapYAML("web", "mode", "fast"))
	planFile := filepath.Join(t.TempDir(), "plan.json")
	mustRunKapply(t, "plan", "-f", dir, "-n", ns, "-o", planFile)

	p := readPlanFile(t, planFile)
	forged := false
	for i, it := range p.Items {
		if it.ID.Name != "web" || it.Action != plan.Update {
			continue
		}
		p.Items[i].KeptLive = []fieldpath.Path{fieldpath.Fields("data", "ctrl")}
		p.Items[i].Patch.Data = withRecordField(t, it.Patch.Data, "ctrl", "x")
		forged = true
	}
	if !forged {
		t.Fatalf("no update item of web in the plan")
	}
	tampered := filepath.Join(t.TempDir(), "tampered.json")
	f, err := os.Create(tampered)
	if err != nil {
		t.Fatal(err)
	}
	if err := plan.Encode(f, p); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r := kapply(t, "apply", "--plan", tampered, "-f", dir, "-n", ns)
	// Whatever the plan did, the files never declared ctrl: the next apply
	// of the same files must leave the other writer's field alone.
	mustRunKapply(t, "apply", "-f", dir, "-n", ns)
	if got := configMapData(t, ns, "web")["ctrl"]; got != "x" {
		t.Errorf("the other writer's data.ctrl is %v after the tampered plan (exit %d) and a plain apply, want x\nstdout %s\nstderr %s", got, r.code, r.stdout, r.stderr)
	}
	if r.code != 1 || !strings.Contains(r.stderr, "ConfigMap/web") {
		t.Errorf("tampered keptLive: exit %d, want 1 naming ConfigMap/web\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
}

// withRecordField is a ConfigMap patch whose last-applied record also
// holds data.key: value.
func withRecordField(t *testing.T, data []byte, key, value string) []byte {
	t.Helper()
	var body map[string]any
	if err := json.Unmarshal(data, &body); err != nil {
		t.Fatal(err)
	}
	annotations := body["metadata"].(map[string]any)["annotations"].(map[string]any)
	var record map[string]any
	if err := json.Unmarshal([]byte(annotations[lastapplied.Annotation].(string)), &record); err != nil {
		t.Fatalf("the patch's record: %v", err)
	}
	record["data"].(map[string]any)[key] = value
	text, err := json.Marshal(record)
	if err != nil {
		t.Fatal(err)
	}
	annotations[lastapplied.Annotation] = string(text)
	out, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
