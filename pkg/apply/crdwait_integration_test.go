package apply_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/kapply/kapply/pkg/apply"
)

// crdNamed is a CRD of the group kapply-wait.example.com whose plural is
// plural and whose kind is kind.
func crdNamed(group, plural, kind string) string {
	return fmt.Sprintf(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: %[2]s.%[1]s}
spec:
  group: %[1]s
  scope: Namespaced
  names: {plural: %[2]s, kind: %[3]s}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`, group, plural, kind)
}

// TestCRDsWithoutCustomResourcesAreNotWaitedFor: a run that applies CRDs
// and none of their custom resources (an install manifest of CRDs) does not
// wait for them to be established, as kubectl does not; a CRD that never
// gets there (its kind taken by another CRD of the group) is still created,
// and the run does not fail.
func TestCRDsWithoutCustomResourcesAreNotWaitedFor(t *testing.T) {
	requireCluster(t)
	w := newWorld(t, kapplyTool, nil)
	group := w.ns + ".kapply-wait.example.com"
	mustKapply(t, w, writeManifest(t, w, crdNamed(group, "widgets", "Widget")))
	path := writeManifest(t, w, crdNamed(group, "gizmos", "Widget"))
	start := time.Now()
	events := kapplyRunOpts(t, w, fileRun{path, apply.Options{Write: apply.WriteOptions{Namespace: w.ns}, Timeout: 3 * time.Second}})
	if ev := events[0]; ev.Outcome != apply.Created {
		t.Fatalf("CRD with a taken kind: %s %v, want created", ev.Outcome, ev.Err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("the run took %s: it waited for a CRD none of its objects needs", took)
	}
}
