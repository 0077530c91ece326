package apply

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestWriteOutcome(t *testing.T) {
	object := func(rv string, replicas any, status string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "web", "resourceVersion": rv, "managedFields": []any{map[string]any{"manager": rv}}},
			"spec":     map[string]any{"replicas": replicas},
			"status":   map[string]any{"phase": status},
		}}
	}
	cases := []struct {
		name          string
		live, written *unstructured.Unstructured
		dryRun        bool
		withStatus    bool
		want          Outcome
	}{
		{"created", nil, object("1", int64(1), "a"), false, false, Created},
		{"resourceVersion kept", object("1", int64(1), "a"), object("1", int64(2), "a"), false, false, Unchanged},
		{"content changed", object("1", int64(1), "a"), object("2", int64(2), "a"), false, false, Configured},
		{"only status and bookkeeping moved", object("1", int64(1), "a"), object("2", int64(1), "b"), false, false, Unchanged},
		{"status the file sets moved", object("1", int64(1), "a"), object("2", int64(1), "b"), false, true, Configured},
		{"dry run compared", object("1", int64(1), "a"), object("1", int64(2), "a"), true, false, Configured},
		// One value for the engine, which planned the write, is one value
		// here: an integer and the same number as a float.
		{"same number, other type", object("1", int64(1), "a"), object("2", float64(1), "a"), false, false, Unchanged},
	}
	for _, c := range cases {
		if got := writeOutcome(c.live, c.written, c.dryRun, c.withStatus); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}
