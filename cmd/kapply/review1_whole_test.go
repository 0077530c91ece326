package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapply/kapply/internal/fixture"
)

// Review of issue 30.1 with inputs the implementers did not choose: each
// case applies a first file, changes it, saves a plan, lets another writer
// act (or not), and runs the plan.

type reviewWhole struct {
	ns, dir, group string
}

func newReviewWhole(t *testing.T) reviewWhole {
	t.Helper()
	w := reviewWhole{ns: cluster.Namespace(t), group: strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")) + ".kapply.test"}
	if len(w.group) > 60 {
		w.group = w.group[len(w.group)-60:]
		w.group = strings.TrimLeft(w.group, ".-")
	}
	mustRunKapply(t, "apply", "-f", writeFiles(t, map[string]string{"crd.yaml": fixture.WidgetCRD(w.group)}))
	t.Cleanup(func() { kapply(t, "delete", "crd", "widgets."+w.group) })
	awaitListMapKeys(t, w.group)
	w.dir = t.TempDir()
	return w
}

func (w reviewWhole) widgets() k8sschema.GroupVersionResource {
	return k8sschema.GroupVersionResource{Group: w.group, Version: "v1", Resource: "widgets"}
}

func (w reviewWhole) widget(spec string) string { return fixture.Widget(w.group, "", "w", spec) }

func (w reviewWhole) jsonPatchWidget(t *testing.T, ops string) {
	t.Helper()
	if _, err := dynamicClient(t).Resource(w.widgets()).Namespace(w.ns).Patch(context.Background(), "w", types.JSONPatchType, []byte(ops), metav1.PatchOptions{FieldManager: "controller"}); err != nil {
		t.Fatalf("the controller's write: %v", err)
	}
}

func (w reviewWhole) spec(t *testing.T, field string) string {
	t.Helper()
	live, err := dynamicClient(t).Resource(w.widgets()).Namespace(w.ns).Get(context.Background(), "w", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(live.Object["spec"].(map[string]any)[field])
	return string(out)
}

// planThenRun applies first, writes second, saves a plan, runs between,
// then apply --plan.
func (w reviewWhole) planThenRun(t *testing.T, first, second string, between func()) result {
	t.Helper()
	writeFile(t, w.dir, "w.yaml", first)
	mustRunKapply(t, "apply", "-f", w.dir, "-n", w.ns)
	writeFile(t, w.dir, "w.yaml", second)
	planFile := filepath.Join(t.TempDir(), "plan.json")
	mustRunKapply(t, "plan", "-f", w.dir, "-n", w.ns, "-o", planFile)
	if between != nil {
		between()
	}
	return kapply(t, "apply", "--plan", planFile, "-f", w.dir, "-n", w.ns)
}

func TestReview1WholeLists(t *testing.T) {
	w := newReviewWhole(t)
	t.Run("set gains an element", func(t *testing.T) {
		r := w.planThenRun(t, w.widget("tags: [a]"), w.widget("tags: [a, b]"), func() {
			w.jsonPatchWidget(t, `[{"op":"add","path":"/spec/tags/-","value":"ctrl"}]`)
		})
		if got := w.spec(t, "tags"); !strings.Contains(got, "ctrl") {
			t.Errorf("exit %d, tags %s: the controller's element lost\n%s", r.code, got, r.stderr)
		}
	})
	t.Run("order only, nobody else", func(t *testing.T) {
		r := w.planThenRun(t, w.widget("byName: [{name: a, value: '1'}, {name: b, value: '2'}]"), w.widget("byName: [{name: b, value: '2'}, {name: a, value: '1'}]"), nil)
		if r.code != 0 {
			t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("nested list in atomic list", func(t *testing.T) {
		r := w.planThenRun(t, w.widget("other: x, rules: [{name: r, ports: [{port: 1}]}]"), w.widget("other: y, rules: [{name: r2, ports: [{port: 1}]}]"), func() {
			w.jsonPatchWidget(t, `[{"op":"add","path":"/spec/rules/0/ports/-","value":{"port":2}}]`)
		})
		if got := w.spec(t, "rules"); !strings.Contains(got, `"port":2`) {
			t.Errorf("exit %d, rules %s: the controller's port lost\n%s", r.code, got, r.stderr)
		}
	})
	t.Run("two-key map list gains an element", func(t *testing.T) {
		r := w.planThenRun(t, w.widget("byPortProtocol: [{port: 1, protocol: TCP}]"), w.widget("byPortProtocol: [{port: 1, protocol: TCP}, {port: 2, protocol: UDP}]"), func() {
			w.jsonPatchWidget(t, `[{"op":"add","path":"/spec/byPortProtocol/-","value":{"port":1,"protocol":"UDP"}}]`)
		})
		if got := w.spec(t, "byPortProtocol"); !strings.Contains(got, `{"port":1,"protocol":"UDP"}`) {
			t.Errorf("exit %d, list %s: the controller's element lost\n%s", r.code, got, r.stderr)
		}
	})
	t.Run("controller removed an element", func(t *testing.T) {
		r := w.planThenRun(t, w.widget("byName: [{name: a, value: '1'}, {name: b, value: '2'}]"), w.widget("byName: [{name: a, value: '9'}, {name: b, value: '2'}]"), func() {
			w.jsonPatchWidget(t, `[{"op":"remove","path":"/spec/byName/1"}]`)
		})
		if r.code == 0 {
			t.Errorf("ran over the removal: list %s\n%s", w.spec(t, "byName"), r.stdout)
		}
	})
	t.Run("preserve-unknown map in keyed element", func(t *testing.T) {
		r := w.planThenRun(t, w.widget("byName: [{name: a, value: '1', config: {x: [1]}}]"), w.widget("byName: [{name: a, value: '2', config: {x: [1]}}]"), func() {
			w.jsonPatchWidget(t, `[{"op":"add","path":"/spec/byName/0/config/x/-","value":2}]`)
		})
		if got := w.spec(t, "byName"); !strings.Contains(got, `[1,2]`) {
			t.Errorf("exit %d, list %s: the controller's value lost\n%s", r.code, got, r.stderr)
		}
	})
	t.Run("env map gains a key while file deletes config", func(t *testing.T) {
		r := w.planThenRun(t, w.widget("config: {a: {b: 1}}, env: {A: a}"), w.widget("env: {A: b}"), func() {
			w.jsonPatchWidget(t, `[{"op":"add","path":"/spec/config/a/c","value":2}]`)
		})
		if r.code == 0 {
			t.Errorf("the deleted config map grew since, and the plan deleted it: %s", w.spec(t, "config"))
		}
	})
}
