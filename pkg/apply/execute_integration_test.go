package apply_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/apply/prune"
	"github.com/kapply/kapply/pkg/plan"
)

// planWorld is a namespace of its own and an Applier.
type planWorld struct {
	t       *testing.T
	ns      string
	applier *apply.Applier
	// planned are the objects of the last plan: execute checks a plan
	// against them unless given others.
	planned []*unstructured.Unstructured
}

func newPlanWorld(t *testing.T, ns string) *planWorld {
	t.Helper()
	requireCluster(t)
	applier, err := newExampleApplier(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	w := &planWorld{t: t, ns: ns, applier: applier}
	w.mustApply(namespaceObject(ns))
	return w
}

func namespaceObject(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
}

func (w *planWorld) configMap(name string, data map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": w.ns}, "data": data}}
}

func (w *planWorld) mustApply(objects ...*unstructured.Unstructured) {
	w.t.Helper()
	events, err := w.applier.Apply(context.Background(), apply.Input{Objects: objects}, apply.Options{})
	if err != nil {
		w.t.Fatal(err)
	}
	failOnFailures(w.t, events)
}

func (w *planWorld) plan(objects ...*unstructured.Unstructured) *plan.Plan {
	w.t.Helper()
	p, err := w.applier.Plan(context.Background(), apply.Input{Objects: objects}, apply.PlanOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	w.planned = objects
	return p
}

// roundTrip is p as saved and read back.
func (w *planWorld) roundTrip(p *plan.Plan) (*plan.Plan, string) {
	w.t.Helper()
	var doc bytes.Buffer
	if err := plan.Encode(&doc, p); err != nil {
		w.t.Fatal(err)
	}
	text := doc.String()
	out, err := plan.Decode(&doc)
	if err != nil {
		w.t.Fatal(err)
	}
	return out, text
}

func (w *planWorld) execute(p *plan.Plan, opts apply.ExecuteOptions) []apply.Event {
	w.t.Helper()
	if opts.Objects.Objects == nil {
		opts.Objects.Objects = w.planned
	}
	events, err := w.applier.Execute(context.Background(), p, opts)
	if err != nil {
		w.t.Fatal(err)
	}
	if len(events) != len(p.Items) {
		w.t.Fatalf("%d events for %d items", len(events), len(p.Items))
	}
	return events
}

// mergePatch is another writer's merge patch of a ConfigMap or Secret.
func (w *planWorld) mergePatch(gvr schema.GroupVersionResource, name, body string) {
	w.t.Helper()
	_, err := dyn(w.t).Resource(gvr).Namespace(w.ns).Patch(context.Background(), name, types.MergePatchType, []byte(body), metav1.PatchOptions{FieldManager: "other-writer"})
	if err != nil {
		w.t.Fatal(err)
	}
}

func (w *planWorld) read(gvr schema.GroupVersionResource, name string) *unstructured.Unstructured {
	w.t.Helper()
	u, err := dyn(w.t).Resource(gvr).Namespace(w.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	return u
}

func dataOf(u *unstructured.Unstructured, key string) string {
	v, _, _ := unstructured.NestedString(u.Object, "data", key)
	return v
}

// TestExecuteRefusesAFieldChangedSincePlan: of two planned patches, the
// one whose field another writer changed after the plan is refused with
// ErrChanged naming the field — the other writer's value stays — and the
// other is written.
func TestExecuteRefusesAFieldChangedSincePlan(t *testing.T) {
	w := newPlanWorld(t, "plan-refuse")
	w.mustApply(w.configMap("a", map[string]any{"k": "1"}), w.configMap("b", map[string]any{"k": "1"}))
	files := []*unstructured.Unstructured{w.configMap("a", map[string]any{"k": "2"}), w.configMap("b", map[string]any{"k": "2"})}
	p := w.plan(files...)
	for _, it := range p.Items {
		if it.Action != plan.Update {
			t.Fatalf("%s planned %s, want patch", it.ID, it.Action)
		}
	}
	w.mergePatch(configMaps, "a", `{"data":{"k":"theirs"}}`)
	p, _ = w.roundTrip(p)
	events := w.execute(p, apply.ExecuteOptions{Objects: apply.Input{Objects: files}})
	if events[0].Outcome != apply.Failed || !errors.Is(events[0].Err, plan.ErrChanged) || !strings.Contains(events[0].Err.Error(), "data.k") {
		t.Errorf("a: %v %v, want failed with %v naming data.k", events[0].Outcome, events[0].Err, plan.ErrChanged)
	}
	if events[1].Outcome != apply.Configured || events[1].Err != nil {
		t.Errorf("b: %v %v, want configured", events[1].Outcome, events[1].Err)
	}
	if got := dataOf(w.read(configMaps, "a"), "k"); got != "theirs" {
		t.Errorf("a's data.k = %q, want the other writer's", got)
	}
	if got := dataOf(w.read(configMaps, "b"), "k"); got != "2" {
		t.Errorf("b's data.k = %q, want the plan's", got)
	}
}

// TestExecuteWritesPastAnUnrelatedChange: a change since the plan to a
// field the plan neither writes nor read moves the resourceVersion; the
// item is written with the new one, and both changes stay.
func TestExecuteWritesPastAnUnrelatedChange(t *testing.T) {
	w := newPlanWorld(t, "plan-unrelated")
	w.mustApply(w.configMap("a", map[string]any{"k": "1"}))
	file := w.configMap("a", map[string]any{"k": "2"})
	p := w.plan(file)
	w.mergePatch(configMaps, "a", `{"metadata":{"labels":{"team":"x"}},"data":{"other":"theirs"}}`)
	events := w.execute(p, apply.ExecuteOptions{Objects: apply.Input{Objects: []*unstructured.Unstructured{file}}})
	if events[0].Outcome != apply.Configured || events[0].Err != nil {
		t.Fatalf("a: %v %v, want configured", events[0].Outcome, events[0].Err)
	}
	live := w.read(configMaps, "a")
	if dataOf(live, "k") != "2" || dataOf(live, "other") != "theirs" || live.GetLabels()["team"] != "x" {
		t.Errorf("live a = %v, want the plan's data.k and the other writer's fields", live.Object)
	}
}

// TestExecuteThenPlanIsUnchanged: creates and patches executed from a
// saved plan leave the objects as Apply would: planned again, every item
// is unchanged. A second Execute of the same plan refuses its create.
func TestExecuteThenPlanIsUnchanged(t *testing.T) {
	w := newPlanWorld(t, "plan-again")
	w.mustApply(w.configMap("old", map[string]any{"k": "1", "gone": "x"}))
	objects := []*unstructured.Unstructured{w.configMap("old", map[string]any{"k": "2"}), w.configMap("new", map[string]any{"k": "1"})}
	p, _ := w.roundTrip(w.plan(objects...))
	events := w.execute(p, apply.ExecuteOptions{Objects: apply.Input{Objects: objects}})
	failOnFailures(t, events)
	for _, it := range w.plan(objects...).Items {
		if it.Action != plan.Unchanged {
			t.Errorf("%s planned again: %s, want unchanged", it.ID, it.Action)
		}
	}
	if _, found := w.read(configMaps, "old").Object["data"].(map[string]any)["gone"]; found {
		t.Errorf("old kept data.gone, which the file dropped")
	}
	again := w.execute(p, apply.ExecuteOptions{Objects: apply.Input{Objects: objects}})
	for i, it := range p.Items {
		if it.Action == plan.Create && (again[i].Outcome != apply.Failed || !errors.Is(again[i].Err, plan.ErrChanged)) {
			t.Errorf("%s executed twice: %v %v, want refused as created since", it.ID, again[i].Outcome, again[i].Err)
		}
	}
}

// TestExecuteSecretNeedsTheFiles: a saved plan keeps a Secret's values
// as digests; executed without the files' objects the Secret is refused,
// with them it is written with the files' values.
func TestExecuteSecretNeedsTheFiles(t *testing.T) {
	w := newPlanWorld(t, "plan-secret")
	secret := func() *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": "s", "namespace": w.ns}, "stringData": map[string]any{"password": "hunter2-plan"}}}
	}
	p, doc := w.roundTrip(w.plan(secret()))
	if strings.Contains(doc, "hunter2-plan") {
		t.Fatalf("the plan document holds the Secret's value")
	}
	if events, err := w.applier.Execute(context.Background(), p, apply.ExecuteOptions{}); !errors.Is(err, apply.ErrTampered) || !strings.Contains(err.Error(), "ExecuteOptions.Objects") || events != nil {
		t.Fatalf("without the files: %v, %d events; want the plan refused", err, len(events))
	}
	events := w.execute(p, apply.ExecuteOptions{Objects: apply.Input{Objects: []*unstructured.Unstructured{secret()}}})
	if events[0].Outcome != apply.Created || events[0].Err != nil {
		t.Fatalf("with the files: %v %v, want created", events[0].Outcome, events[0].Err)
	}
	if got := dataOf(w.read(secrets, "s"), "password"); got != "aHVudGVyMi1wbGFu" {
		t.Errorf("data.password = %q, want base64 of the file's value", got)
	}
}

// TestExecuteConflictBetweenCheckAndWrite: another writer changes the
// planned field after Execute read the object and before its patch
// arrives. The patch carries the resourceVersion it was checked at, so the
// server refuses it (409) and the item fails naming the field — never
// planned again over the other writer's value; a prune item whose object
// changed the same way is refused by the delete's preconditions.
func TestExecuteConflictBetweenCheckAndWrite(t *testing.T) {
	w := newPlanWorld(t, "plan-conflict")
	w.mustApply(w.configMap("a", map[string]any{"k": "1"}))
	file := w.configMap("a", map[string]any{"k": "2"})
	p := w.plan(file)
	hook := &patchRecorder{
		match: func(req *http.Request) bool {
			return req.Method == http.MethodPatch && strings.HasSuffix(req.URL.Path, "/configmaps/a")
		},
		beforeFirst: func() error {
			_, err := dyn(t).Resource(configMaps).Namespace(w.ns).Patch(context.Background(), "a", types.MergePatchType,
				[]byte(`{"data":{"k":"theirs"}}`), metav1.PatchOptions{FieldManager: otherWriter})
			return err
		},
	}
	applier, err := newExampleApplier(hook.wrap(cluster.Config))
	if err != nil {
		t.Fatal(err)
	}
	events, err := applier.Execute(context.Background(), p, apply.ExecuteOptions{Objects: apply.Input{Objects: []*unstructured.Unstructured{file}}})
	if err != nil || hook.hookErr != nil {
		t.Fatal(err, hook.hookErr)
	}
	if calls := hook.recorded(); len(calls) != 1 || calls[0].status != http.StatusConflict {
		t.Errorf("patches sent: %+v, want one, refused with 409", calls)
	}
	if events[0].Outcome != apply.Failed || !errors.Is(events[0].Err, plan.ErrChanged) || !strings.Contains(events[0].Err.Error(), "data.k") {
		t.Errorf("a: %v %v, want failed with %v naming data.k", events[0].Outcome, events[0].Err, plan.ErrChanged)
	}
	if got := dataOf(w.read(configMaps, "a"), "k"); got != "theirs" {
		t.Errorf("a's data.k = %q, want the other writer's", got)
	}
}

// TestExecutePruneItem: a plan asked to prune holds a Prune item for the
// member the files dropped; executed, it deletes that object, and a
// member changed since the plan is refused instead.
func TestExecutePruneItem(t *testing.T) {
	w := newPlanWorld(t, "plan-prune")
	labelled := func(name string) *unstructured.Unstructured {
		cm := w.configMap(name, map[string]any{"k": "1"})
		cm.SetLabels(map[string]string{"plan-prune": "yes"})
		return cm
	}
	w.mustApply(labelled("keep"), labelled("drop"), labelled("changed"))
	opts := apply.PlanOptions{Prune: &prune.Options{Selector: "plan-prune=yes", Allowlist: []string{"/v1/ConfigMap"}}}
	keep := labelled("keep")
	p, err := w.applier.Plan(context.Background(), apply.Input{Objects: []*unstructured.Unstructured{keep}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	pruned := map[string]bool{}
	for _, it := range p.Items {
		if it.Action == plan.Prune {
			pruned[it.ID.Name] = true
		}
	}
	if len(pruned) != 2 || !pruned["drop"] || !pruned["changed"] {
		t.Fatalf("prune items %v, want drop and changed", pruned)
	}
	if _, err := dyn(t).Resource(configMaps).Namespace(w.ns).Get(context.Background(), "drop", metav1.GetOptions{}); err != nil {
		t.Fatalf("the plan of the deleted drop: %v", err)
	}
	w.mergePatch(configMaps, "changed", `{"data":{"k":"theirs"}}`)
	events := w.execute(p, apply.ExecuteOptions{Objects: apply.Input{Objects: []*unstructured.Unstructured{keep}}, PruneSelector: "plan-prune=yes"})
	for i, it := range p.Items {
		switch {
		case it.ID.Name == "drop" && events[i].Outcome != apply.Pruned:
			t.Errorf("drop: %v %v, want pruned", events[i].Outcome, events[i].Err)
		case it.ID.Name == "changed" && (events[i].Outcome != apply.Failed || !errors.Is(events[i].Err, plan.ErrChanged)):
			t.Errorf("changed: %v %v, want refused as changed", events[i].Outcome, events[i].Err)
		}
	}
	if _, err := dyn(t).Resource(configMaps).Namespace(w.ns).Get(context.Background(), "drop", metav1.GetOptions{}); err == nil {
		t.Errorf("drop is still there")
	}
	w.read(configMaps, "changed")
}

// TestPlanCustomResourceOfANewCRD: a CRD and its custom resource, neither
// on the server: the plan maps and plans the resource by the file's CRD
// (nothing is created by the plan); Execute creates the CRD, waits
// for it to be established and creates the resource.
func TestPlanCustomResourceOfANewCRD(t *testing.T) {
	w := newPlanWorld(t, "plan-crd")
	routes := keyedKind{group: "plan.kapply.test"}
	objects, err := decodeAll(routes.crd() + "---\n" + routes.route("a1"))
	if err != nil {
		t.Fatal(err)
	}
	var streamed atomic.Int32
	opts := apply.PlanOptions{Write: apply.WriteOptions{Namespace: w.ns}, OnItem: func(int, plan.Item, *unstructured.Unstructured) { streamed.Add(1) }}
	p, err := w.applier.Plan(context.Background(), apply.Input{Objects: objects}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Items) != 2 || p.Items[0].Action != plan.Create || p.Items[1].Action != plan.Create || streamed.Load() != 2 {
		t.Fatalf("items %+v (%d streamed), want two creates", p.Items, streamed.Load())
	}
	if p.Cluster.Server == "" || p.Cluster.ID == "" {
		t.Errorf("cluster %+v, want the server and kube-system's UID", p.Cluster)
	}
	if _, err := dyn(t).Resource(routes.gvr()).Namespace(w.ns).Get(context.Background(), "r", metav1.GetOptions{}); err == nil {
		t.Fatalf("the plan created the resource")
	}
	events := w.execute(p, apply.ExecuteOptions{Objects: apply.Input{Objects: objects}})
	failOnFailures(t, events)
	if events[1].Outcome != apply.Created {
		t.Errorf("route: %v, want created", events[1].Outcome)
	}
	if _, err := dyn(t).Resource(routes.gvr()).Namespace(w.ns).Get(context.Background(), "r", metav1.GetOptions{}); err != nil {
		t.Errorf("reading the route: %v", err)
	}
}

// TestPlanServerDryRunAndServerSide: a server dry run puts the server's
// answer in the item and changes nothing; a server-side plan holds an
// apply item that Execute sends under kubectl's server-side manager.
func TestPlanServerDryRunAndServerSide(t *testing.T) {
	w := newPlanWorld(t, "plan-dryrun")
	w.mustApply(w.configMap("a", map[string]any{"k": "1"}))
	want := w.configMap("a", map[string]any{"k": "2"})
	p, err := w.applier.Plan(context.Background(), apply.Input{Objects: []*unstructured.Unstructured{want}}, apply.PlanOptions{ServerDryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	result := &unstructured.Unstructured{Object: p.Items[0].DryRunResult}
	if dataOf(result, "k") != "2" || dataOf(w.read(configMaps, "a"), "k") != "1" {
		t.Errorf("dry run result %v, live %v: want the result with k=2, live unchanged", result.Object, w.read(configMaps, "a").Object)
	}
	three := w.configMap("a", map[string]any{"k": "3"})
	p, err = w.applier.Plan(context.Background(), apply.Input{Objects: []*unstructured.Unstructured{three}}, apply.PlanOptions{Write: apply.WriteOptions{ServerSide: true}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Items[0].Action != plan.Apply {
		t.Fatalf("server-side item %s, want apply", p.Items[0].Action)
	}
	events := w.execute(p, apply.ExecuteOptions{Objects: apply.Input{Objects: []*unstructured.Unstructured{three}}})
	failOnFailures(t, events)
	live := w.read(configMaps, "a")
	if dataOf(live, "k") != "3" {
		t.Errorf("data.k = %q, want 3", dataOf(live, "k"))
	}
	managers := map[string]bool{}
	for _, m := range live.GetManagedFields() {
		managers[m.Manager+"/"+string(m.Operation)] = true
	}
	if !managers[apply.ServerSideFieldManager+"/Apply"] {
		t.Errorf("managers %v, want %s applying", managers, apply.ServerSideFieldManager)
	}
}

// TestPlanServerDryRunOfANewCRDsResource: with a server dry run, the
// resource of a CRD the files add is planned by the file's CRD, without a
// dry run the server could not answer, and says so.
func TestPlanServerDryRunOfANewCRDsResource(t *testing.T) {
	w := newPlanWorld(t, "plan-crd-dryrun")
	routes := keyedKind{group: "dryrun.plan.kapply.test"}
	objects, err := decodeAll(routes.crd() + "---\n" + routes.route("a1"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := w.applier.Plan(context.Background(), apply.Input{Objects: objects}, apply.PlanOptions{Write: apply.WriteOptions{Namespace: w.ns}, ServerDryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Items) != 2 || p.Items[0].DryRunResult == nil || p.Items[1].DryRunResult != nil || len(p.Items[1].Warnings) != 1 {
		t.Fatalf("items %+v, want the CRD dry-run and the route planned by the file with a warning", p.Items)
	}
}

// TestPlanErrorKeepsTheOthers: an object that cannot be planned (no name)
// is in the *PlanError, naming it, and the plan holds the others; a plan
// that streams only keeps no item but hands each to OnItem.
func TestPlanErrorKeepsTheOthers(t *testing.T) {
	w := newPlanWorld(t, "plan-error")
	nameless := w.configMap("", map[string]any{"k": "1"})
	objects := []*unstructured.Unstructured{nameless, w.configMap("fine", map[string]any{"k": "1"})}
	p, err := w.applier.Plan(context.Background(), apply.Input{Objects: objects}, apply.PlanOptions{})
	var planErr *apply.PlanError
	if !errors.As(err, &planErr) || len(planErr.Errs) != 1 || !errors.Is(err, apply.ErrNoName) {
		t.Fatalf("err = %v, want a PlanError of the nameless object", err)
	}
	if p == nil || len(p.Items) != 1 || p.Items[0].ID.Name != "fine" {
		t.Fatalf("plan %+v, want the other object's item", p)
	}
	var streamed atomic.Int32
	opts := apply.PlanOptions{StreamOnly: true, OnItem: func(int, plan.Item, *unstructured.Unstructured) { streamed.Add(1) }}
	p, err = w.applier.Plan(context.Background(), apply.Input{Objects: objects[1:]}, opts)
	if err != nil || len(p.Items) != 0 || streamed.Load() != 1 {
		t.Errorf("streaming only: %v, %d items kept, %d streamed; want 0 kept, 1 streamed", err, len(p.Items), streamed.Load())
	}
}
