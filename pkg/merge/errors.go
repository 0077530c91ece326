package merge

import (
	"errors"
	"fmt"

	"github.com/kapply/kapply/pkg/fieldpath"
)

// Side says which input a bad value came from.
type Side int

const (
	// File is the configuration being applied.
	File Side = iota
	// Live is the object read from the server.
	Live
	// LastApplied is the configuration recorded by the previous apply.
	LastApplied
)

// String names the side as a user would.
func (s Side) String() string {
	switch s {
	case Live:
		return "live object"
	case LastApplied:
		return "last-applied configuration"
	}
	return "file"
}

// Sentinel causes of a FieldError; test with errors.Is.
var (
	// ErrMissingMergeKey: an element of a keyed list lacks a key field.
	ErrMissingMergeKey = errors.New("list element is missing its merge key")
	// ErrTypeMismatch: a value's shape contradicts the schema (a list where
	// the schema says object, or the reverse).
	ErrTypeMismatch = errors.New("value does not match the schema")
	// ErrMalformed: a value that is not JSON data, or a directive key that a
	// strategic merge patch would misread.
	ErrMalformed = errors.New("malformed value")
)

// FieldError is bad input at one field. The caller adds the file and object
// identity.
type FieldError struct {
	Side Side
	Path fieldpath.Path
	Err  error
}

// Error prints side, path and cause.
func (e *FieldError) Error() string {
	return fmt.Sprintf("%s: %s: %v", e.Side, e.Path, e.Err)
}

// Unwrap returns the cause, one of the Err* sentinels wrapped with detail.
func (e *FieldError) Unwrap() error { return e.Err }

func fieldError(side Side, where *at, cause error, format string, args ...any) error {
	detail := fmt.Sprintf(format, args...)
	return &FieldError{Side: side, Path: where.path(), Err: fmt.Errorf("%w: %s", cause, detail)}
}
