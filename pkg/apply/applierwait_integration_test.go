package apply_test

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/wait"
)

// TestApplierWaitsForWhatItApplied: Applier.Wait follows the objects an
// Apply created, through the Applier's own clients: a ConfigMap is ready
// at once, a Job whose pod cannot start is not ready within the timeout,
// each result naming its object, OnResult told of each once.
func TestApplierWaitsForWhatItApplied(t *testing.T) {
	w := newPlanWorld(t, "applier-wait")
	job := jobObject(w.ns, "never-runs")
	events, err := w.applier.Apply(context.Background(), apply.Input{Objects: []*unstructured.Unstructured{w.configMap("ready", map[string]any{"k": "v"}), job}}, apply.Options{})
	if err != nil {
		t.Fatal(err)
	}
	failOnFailures(t, events)
	told := 0
	results, err := w.applier.Wait(context.Background(), events, apply.WaitOptions{Timeout: 3 * time.Second,
		OnResult: func(int, wait.Result) { told++ }})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 || told != 2 {
		t.Fatalf("%d results, told %d, want 2 and 2", len(results), told)
	}
	if r := results[0]; r.Target.Name != "ready" || !r.Ready() {
		t.Errorf("ConfigMap: %+v, want ready", r)
	}
	if r := results[1]; r.Target.Name != "never-runs" || r.Ready() {
		t.Errorf("Job without a runnable pod: %+v, want not ready", r)
	}
}

// jobObject is a Job whose pod never starts (an image that does not
// exist; the test server runs no kubelet anyway).
func jobObject(ns, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "batch/v1", "kind": "Job",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"restartPolicy": "Never",
			"containers": []any{map[string]any{"name": "c", "image": "example.invalid/none"}}}}}}}
}
