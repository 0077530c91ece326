package cluster

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
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

// TestSecretsMaskTheServersStatus: a caller that reads the server's status
// from a masked error (errors.As to *StatusError or APIStatus) gets its
// message and causes masked, with the reason and code the server gave.
func TestSecretsMaskTheServersStatus(t *testing.T) {
	secret := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "creds"}, "stringData": map[string]any{"k": "status-value-4Hn6"}}}
	status := apierrors.NewInvalid(schema.GroupKind{Kind: "Secret"}, "creds", field.ErrorList{
		field.Invalid(field.NewPath("data", "k"), "status-value-4Hn6", "is not allowed")})
	var s Secrets
	s.Add(secret)
	masked := s.Error(fmt.Errorf("secret/creds: creating: %w", status))
	var got *apierrors.StatusError
	if !errors.As(masked, &got) || strings.Contains(got.Error(), "status-value-4Hn6") ||
		strings.Contains(got.ErrStatus.Details.Causes[0].Message, "status-value-4Hn6") || !strings.Contains(got.Error(), `"***"`) {
		t.Errorf("the status error: %v", got)
	}
	if !apierrors.IsInvalid(masked) || apierrors.ReasonForError(masked) != metav1.StatusReasonInvalid {
		t.Errorf("the reason is lost: %v", apierrors.ReasonForError(masked))
	}
	if !strings.Contains(status.Error(), "status-value-4Hn6") {
		t.Error("the server's own error was changed")
	}
}
