package schema

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ErrNotFound is wrapped by errors meaning "no schema for this": a document
// that does not declare a kind, a CRD without the version, a Source without
// the group-version. The Resolver turns it into an unknown Kind.
var ErrNotFound = errors.New("schema not found")

// NotFoundError says a document has no component for a kind.
type NotFoundError struct {
	GVK schema.GroupVersionKind
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("no schema for %s", e.GVK)
}

// Unwrap makes errors.Is(err, ErrNotFound) true.
func (e *NotFoundError) Unwrap() error { return ErrNotFound }
