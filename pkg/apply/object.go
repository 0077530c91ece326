package apply

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Object is one object from the files, with where it came from.
type Object struct {
	// Source is the file (or URL, or "STDIN") the object was read from.
	Source string
	// Index is the object's place among those read from Source, from 1
	// (empty documents are not counted; a List counts its items).
	Index int
	// Obj is the object as the file declares it (namespace defaulted).
	Obj *unstructured.Unstructured
	// Mapping is the object's API resource; nil until mapped.
	Mapping *meta.RESTMapping
}

// Ref names the object the way kubectl prints it: kind.group/name, with the
// namespace when there is one.
func (o *Object) Ref() string {
	gk := o.Obj.GroupVersionKind().GroupKind()
	ref := strings.ToLower(gk.Kind)
	if gk.Group != "" {
		ref += "." + gk.Group
	}
	ref += "/" + o.Obj.GetName()
	if ns := o.Obj.GetNamespace(); ns != "" {
		ref += " -n " + ns
	}
	return ref
}

// ObjectError is a failure of one object, naming the file and the object.
type ObjectError struct {
	Source string
	Ref    string
	Err    error
}

func (e *ObjectError) Error() string {
	return fmt.Sprintf("%s (from %s): %v", e.Ref, e.Source, e.Err)
}

func (e *ObjectError) Unwrap() error { return e.Err }

func objectError(o *Object, err error) error {
	return &ObjectError{Source: o.Source, Ref: o.Ref(), Err: err}
}
