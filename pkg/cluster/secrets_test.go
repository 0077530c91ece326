package cluster

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestSecretsMaskFilesLivesAndRecords: Secrets masks the values of the
// Secrets added — the file's, the live one's and those of a plain
// last-applied record (kubectl's, which may hold values no longer in
// data) — in text and in errors, which still unwrap; an error that quotes
// none, a ConfigMap's values and nil are left as they are.
func TestSecretsMaskFilesLivesAndRecords(t *testing.T) {
	file := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata":   map[string]any{"name": "creds", "namespace": "m1"},
		"stringData": map[string]any{"password": "file-value-9Kq2"}}}
	live := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "creds", "namespace": "m1", "annotations": map[string]any{
			"kubectl.kubernetes.io/last-applied-configuration": `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"creds"},"stringData":{"password":"record-value-3Zx8"}}`}},
		"data": map[string]any{"password": "bGl2ZS12YWx1ZS03V3A0"}}} // live-value-7Wp4
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "c"}, "data": map[string]any{"k": "cm-value-1Rt5"}}}
	var s Secrets
	s.Add(file, live, cm, nil)
	err := fmt.Errorf("denied: %w", fs.ErrPermission)
	quoting := fmt.Errorf(`%w: "file-value-9Kq2", live-value-7Wp4 (bGl2ZS12YWx1ZS03V3A0), record-value-3Zx8, cm-value-1Rt5`, err)
	masked := s.Error(quoting)
	if want := `denied: permission denied: "***", *** (***), ***, cm-value-1Rt5`; masked.Error() != want {
		t.Errorf("got %s\nwant %s", masked, want)
	}
	if !errors.Is(masked, fs.ErrPermission) {
		t.Error("the masked error does not unwrap to its cause")
	}
	if s.Error(err) != err || s.Error(nil) != nil {
		t.Error("an error quoting no value, or nil, was changed")
	}
	if got := s.Texts([]string{"x live-value-7Wp4"}); got[0] != "x ***" || s.Texts(nil) != nil {
		t.Errorf("Texts: %q", got)
	}
	var none *Secrets
	if none.Text("live-value-7Wp4") != "live-value-7Wp4" {
		t.Error("nil Secrets masked a value it does not know")
	}
	if got := MaskError(quoting, file).Error(); got != `denied: permission denied: "***", live-value-7Wp4 (bGl2ZS12YWx1ZS03V3A0), record-value-3Zx8, cm-value-1Rt5` {
		t.Errorf("MaskError with the file alone: %s", got)
	}
}
