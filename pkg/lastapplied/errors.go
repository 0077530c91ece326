package lastapplied

import "errors"

// ErrMalformed reports kubectl's last-applied annotation when it is not a
// JSON object (nor empty, nor null, which kubectl takes for no record).
// kubectl apply refuses such an object ("invalid JSON document"), and so
// does kapply apply: the record is the only account of what to delete.
var ErrMalformed = errors.New("the " + Annotation + " annotation is not valid JSON")

// ErrCompactCorrupt reports kapply's compact record when it cannot be
// read: not packed JSON, or past what the object it sits on could have
// recorded (see recordBound). kapply alone writes it, so someone else
// changed it: apply warns and treats it as absent.
var ErrCompactCorrupt = errors.New("the compact last-applied record (" + CompactAnnotation + ") cannot be read")
