package lastapplied

import "errors"

// ErrMalformed reports a last-applied annotation that is not a JSON object.
var ErrMalformed = errors.New("last-applied annotation is not valid JSON")
