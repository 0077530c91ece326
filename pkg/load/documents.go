package load

import "github.com/kapply/kapply/internal/yamldoc"

// isEmptyDocument reports a document with nothing but separators, comments
// and blanks, which the loader skips.
func isEmptyDocument(doc []byte) bool { return yamldoc.IsEmpty(doc) }

// declares reports whether the document is o, or a List holding it.
func declares(doc []byte, o *Object) bool { return yamldoc.Declares(doc, o.Obj) }
