package cluster

import (
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// invalidRequestError is the server's Invalid error said as kubectl says
// it: "The Pod "x" is invalid: ...", or, for a patch it could not decode
// (an unknown field under fieldValidation=Strict), "The request is invalid:
// patch: ..." without the whole object, which the server quotes in each
// cause.
type invalidRequestError struct {
	msg string
	err error
}

func (e *invalidRequestError) Error() string { return e.msg }
func (e *invalidRequestError) Unwrap() error { return e.err }

// ConciseError says an Invalid error as kubectl says it: one naming
// an object as "The Pod "x" is invalid: ..." (kubectl's words, which
// scripts match), one naming no object (a patch the server could not
// decode) shortened; any other error is returned as it is.
func ConciseError(err error) error {
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) {
		return err
	}
	details := status.Status().Details
	if details != nil && details.Name != "" && details.Kind != "" {
		return &invalidRequestError{msg: "The " + status.Status().Message, err: err}
	}
	if details == nil || details.Name != "" || details.Kind != "" || len(details.Causes) == 0 {
		return err
	}
	causes := make([]string, len(details.Causes))
	for i, cause := range details.Causes {
		message := cause.Message
		if _, decoding, found := strings.Cut(message, "strict decoding error: "); found {
			message = "strict decoding error: " + decoding
		}
		causes[i] = fmt.Sprintf("%s: %s", cause.Field, message)
	}
	return &invalidRequestError{msg: "the request is invalid: " + strings.Join(causes, "; "), err: err}
}
