package check_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/internal/testcluster"
	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/check"
)

// timingPolicy is one of the ten policies of TestCheckTiming: each reads
// the object, one a param.
const timingPolicy = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: NAME}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
  variables:
  - {name: keys, expression: "has(object.data) ? size(object.data) : 0"}
  validations:
  - expression: "variables.keys <= 50 && object.metadata.name.size() < 200"
    messageExpression: "'ConfigMap ' + object.metadata.name + ' has ' + string(variables.keys) + ' keys'"
  - expression: "!has(object.metadata.labels) || object.metadata.labels.all(k, k.size() < 64)"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: NAME}
spec:
  policyName: NAME
  validationActions: [ACTION]
  matchResources:
    namespaceSelector: {matchLabels: {kapply-check: NAMESPACE}}
`

// TestCheckTiming measures what --check adds to planning 1000 ConfigMaps
// (half updates, half creates) under 10 policies. Run it with
// KAPPLY_CHECK_TIMING=1; it logs the figures and fails above +20%.
func TestCheckTiming(t *testing.T) {
	if os.Getenv("KAPPLY_CHECK_TIMING") == "" {
		t.Skip("set KAPPLY_CHECK_TIMING=1 to measure")
	}
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	admin := newEnv(t, cluster.Config)
	labelNamespace(t, admin, ns, map[string]string{"kapply-check": ns})
	objects := make([]*unstructured.Unstructured, 1000)
	for i := range objects {
		objects[i] = &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": fmt.Sprintf("cm-%04d", i), "namespace": ns, "labels": map[string]any{"app": "timing"}},
			"data":     map[string]any{"a": "1", "b": fmt.Sprint(i)}}}
	}
	ctx := context.Background()
	applier := admin.applier()
	if _, err := applier.Apply(ctx, apply.Input{Objects: objects[:500]}, apply.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, o := range objects[:500] {
		o.Object["data"].(map[string]any)["c"] = "changed"
	}
	for i := range 10 {
		action := []string{"Deny", "Warn", "Audit"}[i%3]
		doc := strings.NewReplacer("NAME", fmt.Sprintf("%s-timing-%d", ns, i), "ACTION", action, "NAMESPACE", ns).Replace(timingPolicy)
		admin.create(readYAML(t, doc))
	}
	// A first plan warms the applier's caches (discovery, schemas), so
	// that each timed plan below starts alike.
	if _, err := applier.Plan(ctx, apply.Input{Objects: objects}, apply.PlanOptions{}); err != nil {
		t.Fatal(err)
	}
	// Medians of three runs, plan alone and plan --check alternating, so
	// that a burst of load on the shared machine skews one run, not all.
	var planned, checked, sequential []time.Duration
	for range 3 {
		// Alone: the plan's wall time.
		start := time.Now()
		if _, err := applier.Plan(ctx, apply.Input{Objects: objects}, apply.PlanOptions{}); err != nil {
			t.Fatal(err)
		}
		planned = append(planned, time.Since(start))
		// With --check, as the CLI runs it: the policies are read while
		// the plan is made, then the items are checked.
		start = time.Now()
		loaded := make(chan *check.Checker, 1)
		go func() {
			checker, err := check.Load(ctx, admin.clients)
			if err != nil {
				t.Error(err)
			}
			loaded <- checker
		}()
		p, err := applier.Plan(ctx, apply.Input{Objects: objects}, apply.PlanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		checker := <-loaded
		if checker == nil {
			t.FailNow()
		}
		planEnd := time.Now()
		if err := checker.Plan(ctx, p); err != nil {
			t.Fatal(err)
		}
		checked = append(checked, time.Since(start))
		sequential = append(sequential, time.Since(planEnd))
	}
	plain, withCheck := median(planned), median(checked)
	ratio := float64(withCheck-plain) / float64(plain)
	t.Logf("1000 objects x 10 policies, medians of 3: plan %v, plan --check %v (+%.1f%%; checking the items after the plan %v); runs: plan %v, --check %v",
		plain, withCheck, 100*ratio, median(sequential), planned, checked)
	if ratio > 0.20 {
		t.Errorf("--check adds %.1f%% to plan's wall time, more than 20%%", 100*ratio)
	}
}

// median is the middle of three or more durations.
func median(d []time.Duration) time.Duration {
	sorted := slices.Clone(d)
	slices.Sort(sorted)
	return sorted[len(sorted)/2]
}
