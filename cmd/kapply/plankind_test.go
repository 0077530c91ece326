package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kapply/kapply/pkg/plan"
)

// TestPlanDocumentKind: the kind is read wherever it stands among the
// top-level fields; a document that is no JSON object is an error.
func TestPlanDocumentKind(t *testing.T) {
	dir := t.TempDir()
	for doc, want := range map[string]string{
		`{"apiVersion":"kapply.dev/v1alpha2","kind":"PlanList","plans":[{"context":"a"}]}`: plan.SetKind,
		`{"items":[{"a":{"b":[1,2,"}"]}}],"checksum":"x","kind":"Plan"}`:                   "Plan",
		`{"apiVersion":"kapply.dev/v1alpha2"}`:                                             "",
		`[{"kind":"PlanList"}]`:                                                            "error",
		`{"kind":`:                                                                         "error",
	} {
		path := filepath.Join(dir, "plan.json")
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := planDocumentKind(path)
		if err != nil {
			got = "error"
		}
		if got != want {
			t.Errorf("%s: kind %q (%v), want %q", doc, got, err, want)
		}
	}
}
