package main

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapply/kapply/pkg/diff"
	"github.com/kapply/kapply/pkg/lastapplied"
)

// Secret values are never printed. Objects a command prints whole have
// them masked (maskObjects), with pkg/diff's masks, as in diff, status and
// adopt. Errors and warnings about a Secret, which may quote a value (the
// server's message, an admission webhook's), come from pkg/apply masked
// already; the few texts the command makes or gets itself (warnings of
// its own requests, commandWarnings; a diff it could not render) are
// masked with pkg/cluster's Secrets, the one implementation.

// maskObjects returns objs with each Secret's values masked.
func maskObjects(objs []runtime.Object) []runtime.Object {
	out := make([]runtime.Object, len(objs))
	for i, obj := range objs {
		out[i] = obj
		if u, ok := obj.(*unstructured.Unstructured); ok && u != nil {
			out[i] = &unstructured.Unstructured{Object: diff.MaskSecret(u.Object)}
		}
	}
	return out
}

// shownError is an error shown with another text (options named as
// flags); it still unwraps to the error.
type shownError struct {
	text string
	err  error
}

func (e *shownError) Error() string { return e.text }
func (e *shownError) Unwrap() error { return e.err }

// parseSecretRecord reads apply's --secret-record; empty (a command that
// has no such flag, as diff) is the default, redacted.
func parseSecretRecord(s string) (lastapplied.SecretRecord, error) {
	if s == "" {
		return lastapplied.RedactSecrets, nil
	}
	mode, err := lastapplied.ParseSecretRecord(s)
	if err != nil {
		return 0, fmt.Errorf("--secret-record: %w", err)
	}
	return mode, nil
}
