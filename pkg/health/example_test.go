package health_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/health"
)

// A health file's rules decide a Database's status by its phase; the
// command passes Checker.Status to the wait (wait.Options.Status).
func Example() {
	rules, err := health.Parse([]byte(`
- apiVersion: example.com/v1
  kind: Database
  failed: status.phase == "Broken"
  current: status.phase == "Ready"
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	checker, err := health.Compile(rules)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, phase := range []string{"Creating", "Ready", "Broken"} {
		db := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1", "kind": "Database",
			"metadata": map[string]any{"name": "db"},
			"status":   map[string]any{"phase": phase},
		}}
		status, reason, message, _ := checker.Status(db)
		fmt.Printf("%s: %s %s: %s\n", phase, status, reason, message)
	}
	_, _, _, ok := checker.Status(&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}})
	fmt.Println("a ConfigMap has a rule:", ok)
	// Output:
	// Creating: InProgress HealthNotCurrent: the current expression `status.phase == "Ready"` is not true yet
	// Ready: Current HealthCurrent: the current expression `status.phase == "Ready"` is true
	// Broken: Failed HealthFailed: the failed expression `status.phase == "Broken"` is true
	// a ConfigMap has a rule: false
}
