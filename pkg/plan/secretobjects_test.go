package plan

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestWithSecretValuesOfObjectsDoesNotPanic: a plan file is input (it may
// be edited by hand); where it and the files hold an object in place of
// a Secret's value, executing it refuses with ErrSecretMismatch or goes
// on, never panics.
func TestWithSecretValuesOfObjectsDoesNotPanic(t *testing.T) {
	item := Item{ID: ID{Version: "v1", Kind: "Secret", Namespace: "ns", Name: "s"}, Action: Update, DigestKey: testKey,
		Merged: map[string]any{"apiVersion": "v1", "kind": "Secret", "data": map[string]any{"k": map[string]any{"a": "b"}}}}
	file := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"data": map[string]any{"k": map[string]any{"a": "c"}}}}
	if _, err := item.WithSecretValues(file); !errors.Is(err, ErrSecretMismatch) {
		t.Errorf("a changed object value: %v, want ErrSecretMismatch", err)
	}
}
