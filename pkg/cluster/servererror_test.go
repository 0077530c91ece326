package cluster

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestConciseErrorInKubectlsWords: an Invalid error naming an object reads
// as kubectl prints it; one naming none (a patch the server could not
// decode) is cut to its causes, without the object the server quotes; both
// still unwrap to the server's error; other errors pass unchanged.
func TestConciseErrorInKubectlsWords(t *testing.T) {
	named := apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "x", field.ErrorList{field.Invalid(field.NewPath("data"), "v", "bad")})
	if err := ConciseError(named); err.Error() != `The ConfigMap "x" is invalid: data: Invalid value: "v": bad` || !errors.Is(err, named) {
		t.Errorf("named: %q", err)
	}
	unnamed := &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 422, Reason: metav1.StatusReasonInvalid,
		Message: `{"kind":"ConfigMap",...} is invalid`, Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{
			{Field: "patch", Message: `error decoding patch: json: strict decoding error: unknown field "spec.x"`}}}}}
	if err := ConciseError(unnamed); err.Error() != `the request is invalid: patch: strict decoding error: unknown field "spec.x"` || !errors.Is(err, unnamed) {
		t.Errorf("unnamed: %q", err)
	}
	other := errors.New("refused")
	if ConciseError(other) != other {
		t.Error("another error was changed")
	}
}
