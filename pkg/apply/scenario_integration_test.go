package apply_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/schema"
)

// scenario is one of the page's merge examples, run against the real API
// server: the same steps are run once with kapply and once with kubectl
// apply, each in a namespace of its own.
type scenario struct {
	name string
	// objects are the objects the steps create, compared at the end.
	objects []objRef
	steps   []step
	// check asserts the expected result on kapply's objects directly, so
	// the scenario means something even if kubectl were wrong.
	check func(t *testing.T, live map[objRef]*unstructured.Unstructured)
	// kubectlCheck, when set, asserts kubectl's result instead of wanting
	// it equal to kapply's: for custom resources, whose lists kubectl
	// replaces whole.
	kubectlCheck func(t *testing.T, live map[objRef]*unstructured.Unstructured)
	// mergeKeys are kapply's declared merge keys (kubectl has none).
	mergeKeys []schema.Override
}

// runScenarios runs each scenario as a parallel subtest.
func runScenarios(t *testing.T, scenarios []scenario) {
	requireCluster(t)
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			runScenario(t, sc)
		})
	}
}

// runScenario runs the steps with kapply, checks the result and that
// re-applying the final file changes nothing, then runs the steps with
// kubectl and compares the live objects.
func runScenario(t *testing.T, sc scenario) {
	ours := newWorld(t, kapplyTool, sc.mergeKeys)
	runSteps(t, ours, sc.steps)
	live := liveObjects(t, ours, sc.objects)
	sc.check(t, live)
	assertReapply(t, ours)
	if !haveKubectl(t) {
		return
	}
	theirs := newWorld(t, kubectlTool, nil)
	runSteps(t, theirs, sc.steps)
	if sc.kubectlCheck != nil {
		sc.kubectlCheck(t, liveObjects(t, theirs, sc.objects))
		return
	}
	assertSameAsKubectl(t, live, liveObjects(t, theirs, sc.objects))
}
