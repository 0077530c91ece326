package apply_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapply/kapply/pkg/apply"
	kcluster "github.com/kapply/kapply/pkg/cluster"
	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/plan"
)

// configMap is a ConfigMap built in code, without a namespace: the
// operations give it the one of their options.
func configMap(name string, data map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name}, "data": data}}
}

// TestOwnershipOperationsOnObjectsBuiltInCode: Adopt, Status, Release,
// SetLastApplied and EditLastApplied take objects a program builds
// (no pkg/load: plain unstructured objects) and read and write them
// through the Applier's clients. The free functions they replace reached
// the server through Info and panicked on such objects.
func TestOwnershipOperationsOnObjectsBuiltInCode(t *testing.T) {
	requireCluster(t)
	ctx := context.Background()
	ns := cluster.Namespace(t)
	applier, err := newExampleApplier(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	client := dyn(t).Resource(configMaps).Namespace(ns)
	// Made imperatively: no record.
	if _, err := client.Create(ctx, configMap("web", map[string]any{"mode": "fast"}), metav1.CreateOptions{FieldManager: "kubectl-create"}); err != nil {
		t.Fatal(err)
	}
	objects := []*unstructured.Unstructured{configMap("web", map[string]any{"mode": "fast", "replicas": "3"})}
	recordOf := func() map[string]any {
		t.Helper()
		live, err := client.Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		record, err := lastapplied.Read(live)
		if err != nil {
			t.Fatal(err)
		}
		return record
	}
	status := func() apply.ObjectStatus {
		t.Helper()
		statuses, err := applier.Status(ctx, apply.Input{Objects: objects}, apply.StatusOptions{Namespace: ns})
		if err != nil || len(statuses) != 1 {
			t.Fatalf("Status: %v, %d statuses", err, len(statuses))
		}
		return statuses[0]
	}
	if s := status(); s.State != apply.StateNoRecord || s.Health == nil || s.Health.Status != "Current" {
		t.Errorf("before adopt: state %s, health %+v; want no-record, Current", s.State, s.Health)
	}

	// Adopt: the record is written, and the plan says the next apply adds replicas.
	adoptions, err := applier.Adopt(ctx, apply.Input{Objects: objects}, apply.AdoptOptions{Namespace: ns})
	if err != nil || len(adoptions) != 1 || adoptions[0].Err != nil || adoptions[0].Skip != nil {
		t.Fatalf("Adopt: %v %+v", err, adoptions)
	}
	if got := changePaths(adoptions[0]); got != "data.replicas" {
		t.Errorf("adopt: the next apply changes %q, want data.replicas", got)
	}
	if got := toJSON(recordOf()["data"]); got != `{"mode":"fast","replicas":"3"}` {
		t.Errorf("record after adopt: data %s", got)
	}
	again, err := applier.Adopt(ctx, apply.Input{Objects: objects}, apply.AdoptOptions{Namespace: ns})
	if err != nil || again[0].Skip == nil {
		t.Errorf("adopting again: %v, skip %v; want skipped", err, again[0].Skip)
	}

	// Status: drifted (replicas recorded, not live), then in step once applied.
	if s := status(); s.State != apply.StateApplied || len(s.Changed) != 1 || s.Changed[0].Path.String() != "data.replicas" || !s.Changed[0].LiveMissing {
		t.Errorf("status after adopt: %s %+v; want data.replicas changed (removed)", s.State, s.Drift)
	}
	if events, err := applier.Apply(ctx, apply.Input{Objects: objects}, apply.Options{Write: apply.WriteOptions{Namespace: ns}}); err != nil || events[0].Err != nil {
		t.Fatalf("apply: %v %+v", err, events)
	}
	if s := status(); s.State != apply.StateApplied || len(s.Changed) != 0 {
		t.Errorf("status after apply: %s, changed %+v; want in step", s.State, s.Changed)
	}

	// Release: replicas leaves the record; the object still sets it.
	replicas, err := fieldpath.Parse("data.replicas")
	if err != nil {
		t.Fatal(err)
	}
	releases, err := applier.Release(ctx, apply.Input{Objects: objects}, apply.ReleaseOptions{Namespace: ns, Fields: []fieldpath.Path{replicas}})
	if err != nil || releases[0].Err != nil || releases[0].Unchanged {
		t.Fatalf("Release: %v %+v", err, releases)
	}
	if len(releases[0].StillSet) != 1 || releases[0].StillSet[0].String() != "data.replicas" {
		t.Errorf("release: still set %v, want data.replicas", releases[0].StillSet)
	}
	if got := toJSON(recordOf()["data"]); got != `{"mode":"fast"}` {
		t.Errorf("record after release: data %s", got)
	}

	// SetLastApplied records a new version without writing the object.
	objects[0].Object["data"] = map[string]any{"mode": "slow"}
	set, err := applier.SetLastApplied(ctx, apply.Input{Objects: objects}, apply.SetLastAppliedOptions{Namespace: ns})
	if err != nil || set[0].Err != nil || set[0].Unchanged {
		t.Fatalf("SetLastApplied: %v %+v", err, set)
	}
	if got := toJSON(recordOf()["data"]); got != `{"mode":"slow"}` {
		t.Errorf("record after set: data %s", got)
	}
	if s := status(); len(s.Changed) != 1 || s.Changed[0].Path.String() != "data.mode" || s.Changed[0].Live != "fast" {
		t.Errorf("status after set: %+v; want data.mode changed, live fast", s.Drift)
	}

	// EditLastApplied hands the record to a function.
	edited := applier.EditLastApplied(ctx, objects[0], plan.Source{}, func(record []byte) ([]byte, error) {
		if !strings.Contains(string(record), "mode: slow") {
			t.Errorf("the record to edit:\n%s", record)
		}
		return []byte(strings.Replace(string(record), "mode: slow", "mode: fast", 1)), nil
	}, apply.EditLastAppliedOptions{Namespace: ns})
	if edited.Err != nil || edited.Unchanged {
		t.Fatalf("EditLastApplied: %+v", edited)
	}
	if got := toJSON(recordOf()["data"]); got != `{"mode":"fast"}` {
		t.Errorf("record after edit: data %s", got)
	}

	// An object the Applier applied is in step: nothing changed, nothing
	// owned by another manager.
	applied := []*unstructured.Unstructured{configMap("applied", map[string]any{"k": "v"})}
	if events, err := applier.Apply(ctx, apply.Input{Objects: applied}, apply.Options{Write: apply.WriteOptions{Namespace: ns}}); err != nil || events[0].Err != nil {
		t.Fatalf("apply: %v %+v", err, events)
	}
	statuses, err := applier.Status(ctx, apply.Input{Objects: applied}, apply.StatusOptions{Namespace: ns})
	if err != nil || statuses[0].State != apply.StateApplied || len(statuses[0].Changed)+len(statuses[0].Foreign) != 0 {
		t.Errorf("status of an applied object: %v %+v; want in step", err, statuses)
	}
}

// TestOwnershipOperationsPlanBeforeWriting: an object that is not on the
// server is the error of Adopt, Release and SetLastApplied, naming it, and
// the others are not written; Status says it is missing.
func TestOwnershipOperationsPlanBeforeWriting(t *testing.T) {
	requireCluster(t)
	ctx := context.Background()
	ns := cluster.Namespace(t)
	applier, err := newExampleApplier(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	client := dyn(t).Resource(configMaps).Namespace(ns)
	if _, err := client.Create(ctx, configMap("here", map[string]any{"a": "1"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	objects := []*unstructured.Unstructured{configMap("here", map[string]any{"a": "1"}), configMap("gone", nil)}
	_, adoptErr := applier.Adopt(ctx, apply.Input{Objects: objects}, apply.AdoptOptions{Namespace: ns})
	_, setErr := applier.SetLastApplied(ctx, apply.Input{Objects: objects}, apply.SetLastAppliedOptions{Namespace: ns, CreateMissing: true})
	for _, err := range []error{adoptErr, setErr} {
		if err == nil || !strings.Contains(err.Error(), "configmap/gone") || !strings.Contains(err.Error(), "not found") {
			t.Errorf("error %v; want configmap/gone not found", err)
		}
	}
	live, err := client.Get(ctx, "here", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := live.GetAnnotations()[lastapplied.Annotation]; ok {
		t.Errorf("a failed plan wrote a record on configmap/here")
	}
	statuses, err := applier.Status(ctx, apply.Input{Objects: objects}, apply.StatusOptions{Namespace: ns})
	if err != nil || statuses[0].State != apply.StateNoRecord || statuses[1].State != apply.StateMissing {
		t.Errorf("Status: %v %+v; want no-record, missing", err, statuses)
	}

	// A client dry run plans and writes nothing; a field the record lacks
	// cannot be released.
	objects = objects[:1]
	dry, err := applier.Adopt(ctx, apply.Input{Objects: objects}, apply.AdoptOptions{Namespace: ns, RecordWrite: apply.RecordWrite{DryRun: kcluster.ClientDryRun}})
	if err != nil || dry[0].Err != nil {
		t.Fatalf("dry run: %v %+v", err, dry)
	}
	if live, _ := client.Get(ctx, "here", metav1.GetOptions{}); live.GetAnnotations()[lastapplied.Annotation] != "" {
		t.Errorf("a client dry run wrote a record")
	}
	patch := `{"metadata":{"annotations":{"` + lastapplied.Annotation + `":"{}"}}}`
	if _, err := client.Patch(ctx, "here", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	released, err := applier.Release(ctx, apply.Input{Objects: objects}, apply.ReleaseOptions{Namespace: ns, Fields: []fieldpath.Path{mustParse(t, "data.a")}})
	if err == nil || !strings.Contains(err.Error(), "configmap/here") {
		t.Errorf("releasing a field the record lacks: %v %+v; want an error naming configmap/here", err, released)
	}
}

func mustParse(t *testing.T, path string) fieldpath.Path {
	t.Helper()
	p, err := fieldpath.Parse(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// changePaths are the paths an adoption says the next apply changes.
func changePaths(a apply.Adoption) string {
	var paths []string
	for _, c := range a.Changes {
		paths = append(paths, c.Path.String())
	}
	b, _ := json.Marshal(paths)
	return strings.Trim(strings.ReplaceAll(string(b), `"`, ""), "[]")
}
