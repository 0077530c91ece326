package apply_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

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

// TestApplierWaitHandsOnItsWarnings: the server's warnings about the
// wait's own requests (a LIST of a deprecated version) reach OnWarning,
// each once: apply --wait prints them as kubectl prints a warning.
func TestApplierWaitHandsOnItsWarnings(t *testing.T) {
	w := newPlanWorld(t, "applier-wait-warns")
	group := "waitwarn.kapply.test"
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.%[1]s}
spec:
  group: %[1]s
  names: {kind: Gadget, plural: gadgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    deprecated: true
    deprecationWarning: "gadgets v1 is going away"
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`, group)), &crd.Object); err != nil {
		t.Fatal(err)
	}
	gadget := &unstructured.Unstructured{Object: map[string]any{"apiVersion": group + "/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": "g", "namespace": w.ns}}}
	events, err := w.applier.Apply(context.Background(), apply.Input{Objects: []*unstructured.Unstructured{crd, gadget}}, apply.Options{})
	if err != nil {
		t.Fatal(err)
	}
	failOnFailures(t, events)
	var warnings []string
	results, err := w.applier.Wait(context.Background(), events[1:], apply.WaitOptions{Timeout: 10 * time.Second,
		OnWarning: func(text string) { warnings = append(warnings, text) }})
	if err != nil || len(results) != 1 || !results[0].Ready() {
		t.Fatalf("wait: %v, %+v", err, results)
	}
	if len(warnings) != 1 || warnings[0] != "gadgets v1 is going away" {
		t.Errorf("warnings %q, want the deprecation's, once", warnings)
	}
}
