package main

import (
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kapply/kapply/internal/testcluster"
	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/load"
	"github.com/kapply/kapply/pkg/plan"
)

// badConfigMap is refused by the server's validation (a data key with
// spaces): its server dry run fails.
func badConfigMap(name string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\ndata: {\"no spaces allowed\": v}\n"
}

// readPlan decodes the plan document at path, returning it and its text.
func readPlan(t *testing.T, path string) (*plan.Plan, string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no plan saved: %v", err)
	}
	p, err := plan.Decode(strings.NewReader(string(data)))
	if err != nil {
		t.Fatalf("the saved plan does not decode: %v\n%s", err, data)
	}
	return p, string(data)
}

func actionsByName(p *plan.Plan) map[string]plan.Action {
	out := map[string]plan.Action{}
	for _, it := range p.Items {
		out[it.ID.Name] = it.Action
	}
	return out
}

// TestDiffSavePlan: diff --save-plan writes the plan it shows: each
// object with its action, the Secret's values only as digests; objects
// that fail (two, before and after the others) are left out of it, their
// errors come in input order, the others are shown and saved, and the
// exit is 2 as diff's with a failure.
func TestDiffSavePlan(t *testing.T) {
	testcluster.Require(t, cluster)
	dir, ns := diffScenario(t)
	writeFile(t, dir, "0-bad.yaml", badConfigMap("bad-first"))
	writeFile(t, dir, "9-bad.yaml", badConfigMap("bad-last"))
	path := filepath.Join(t.TempDir(), "plan.json")
	r := kapply(t, "diff", "-f", dir, "-n", ns, "--save-plan", path)
	first, last := strings.Index(r.stderr, "configmap/bad-first"), strings.Index(r.stderr, "configmap/bad-last")
	if r.code != exitError || !strings.Contains(r.stdout, "MERGED/v1.ConfigMap."+ns+".settings") || first < 0 || last < first {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	p, text := readPlan(t, path)
	want := map[string]plan.Action{"web": plan.Update, "settings": plan.Update, "creds": plan.Update, "new": plan.Create, "api": plan.Unchanged}
	got := actionsByName(p)
	for name, action := range want {
		if got[name] != action {
			t.Errorf("%s: action %q, want %q", name, got[name], action)
		}
	}
	if len(got) != len(want) {
		t.Errorf("items %v, want %v", got, want)
	}
	// Changes keep their owners: kubectl-scale set the replicas the file
	// takes back; the ConfigMaps, four of them, are read by LIST, where
	// diff alone drops managedFields.
	if owners := ownersOf(p, "web", "spec.replicas"); len(owners) != 1 || !strings.HasPrefix(owners[0], "kubectl-scale") {
		t.Errorf("web's spec.replicas owned by %v, want kubectl-scale", owners)
	}
	if owners := ownersOf(p, "settings", "data.b"); len(owners) != 1 || owners[0] != "kubectl-client-side-apply" {
		t.Errorf("settings' data.b owned by %v, want kubectl-client-side-apply", owners)
	}
	for _, value := range []string{"first-pass", "second-pass"} {
		if strings.Contains(text, value) || strings.Contains(text, base64.StdEncoding.EncodeToString([]byte(value))) {
			t.Errorf("the plan holds the Secret value %q", value)
		}
	}
	if p.Cluster.Server == "" || p.Cluster.ID == "" {
		t.Errorf("cluster %+v: want its server and ID", p.Cluster)
	}
	// Computed locally, a plan is saved too (the bad objects then pass:
	// only the server validates them).
	if r := kapply(t, "diff", "-f", dir, "-n", ns, "--save-plan", path, "--local"); r.code != exitDifferences {
		t.Errorf("--local: exit %d\n%s", r.code, r.stderr)
	}
	if p, _ := readPlan(t, path); actionsByName(p)["creds"] != plan.Update || actionsByName(p)["bad-last"] != plan.Create {
		t.Errorf("--local plan: %v", actionsByName(p))
	}
}

func ownersOf(p *plan.Plan, name, path string) []string {
	for _, it := range p.Items {
		for _, c := range it.Changes {
			if it.ID.Name == name && c.Path.String() == path {
				return c.Owners
			}
		}
	}
	return nil
}

// TestDiffSavePlanPrune: a prune item is saved as such.
func TestDiffSavePlanPrune(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := fiveConfigMaps(t)
	if r := kapply(t, "apply", "-f", dir, "-n", ns, "--prune", "--applyset=shop"); r.code != 0 {
		t.Fatalf("first apply: exit %d\n%s", r.code, r.stderr)
	}
	if err := os.Remove(filepath.Join(dir, "cm4.yaml")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "plan.json")
	if r := kapply(t, "diff", "-f", dir, "-n", ns, "--prune", "--applyset=shop", "--save-plan", path); r.code != exitDifferences {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	p, _ := readPlan(t, path)
	if got := actionsByName(p); got["cm4"] != plan.Prune || got["cm1"] != plan.Unchanged {
		t.Errorf("items %v", got)
	}
}

// TestDiffServerSidePlanExecutesPastOtherWrites: a server-side plan
// records the fields it changes, so that executing it later writes past
// another writer's change elsewhere (a label it does not set: new
// resourceVersion), also for an object it leaves as it is, and still
// refuses a change to a field it sets.
func TestDiffServerSidePlanExecutesPastOtherWrites(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"a.yaml": labelledConfigMap("a", "app: a", "k: v1"), "b.yaml": labelledConfigMap("b", "app: b", "k: v1"),
		"c.yaml": labelledConfigMap("c", "app: c", "k: v1")})
	if r := kapply(t, "apply", "--server-side", "-f", dir, "-n", ns); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.stderr)
	}
	writeFile(t, dir, "a.yaml", labelledConfigMap("a", "app: a", "k: v2"))
	writeFile(t, dir, "b.yaml", labelledConfigMap("b", "app: b", "k: v2"))
	path := filepath.Join(t.TempDir(), "plan.json")
	if r := kapply(t, "diff", "--server-side", "-f", dir, "-n", ns, "--save-plan", path); r.code != exitDifferences {
		t.Fatalf("diff: exit %d\n%s", r.code, r.stderr)
	}
	p, _ := readPlan(t, path)
	for _, it := range p.Items {
		if it.ID.Name == "c" {
			if len(it.Changes) != 0 {
				t.Errorf("c, unchanged: changes %+v", it.Changes)
			}
			continue
		}
		// Under kubectl's manager the server also rewrites the record:
		// the saved plan checks it by its digest (lastApplied), not as a
		// change (its text would be twice in the file).
		var paths []string
		for _, c := range it.Changes {
			if c.Reason == plan.SetByFile {
				paths = append(paths, c.Path.String())
			}
		}
		if it.Action != plan.Apply || len(paths) != 1 || paths[0] != "data.k" || it.LastApplied == "" {
			t.Errorf("%s: %s with changes %+v, record digest %q, want an apply changing data.k and a record digest", it.ID, it.Action, it.Changes, it.LastApplied)
		}
	}
	cms := dynClient(t).Resource(configMaps).Namespace(ns)
	for name, patch := range map[string]string{"a": `{"metadata":{"labels":{"team":"other"}}}`, "b": `{"data":{"k":"theirs"}}`, "c": `{"metadata":{"labels":{"team":"other"}}}`} {
		if _, err := cms.Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "other"}); err != nil {
			t.Fatal(err)
		}
	}
	getter := genericclioptions.NewConfigFlags(false)
	getter.KubeConfig = &cluster.Kubeconfig
	getter.Namespace = &ns
	applier, in, err := loadAndConnect(context.Background(), getter, nil, load.Files{Filenames: []string{dir}}, "", applierConfig{})
	if err != nil {
		t.Fatal(err)
	}
	events, err := applier.Execute(context.Background(), p, apply.ExecuteOptions{Objects: in})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		switch ev.Object.GetName() {
		case "a", "c":
			if ev.Outcome == apply.Failed {
				t.Errorf("%s, whose label another writer added, refused: %v", ev.Object.GetName(), ev.Err)
			}
		case "b":
			if !errors.Is(ev.Err, plan.ErrChanged) || !strings.Contains(ev.Err.Error(), "data.k") {
				t.Errorf("b, whose data.k another writer set: %v, want refused naming data.k", ev.Err)
			}
		}
	}
	assertData(t, cms, "a", map[string]any{"k": "v2"})
	assertData(t, cms, "b", map[string]any{"k": "theirs"})
}
