package load

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/resource"
)

// Object is one object with where it came from: read from a file for
// apply, diff and delete, or named by a file or TYPE/NAME and read from the
// server for the ownership commands.
type Object struct {
	// Source is the file (or URL, or "STDIN") the object was read from or
	// named by; empty for objects given to the library directly.
	Source string
	// Index is the object's place among those read from Source, from 1
	// (empty documents are not counted; a List counts its items).
	Index int
	// Obj is the object as the file declares it (namespace defaulted), or as
	// the server returned it when read with ReadLive.
	Obj *unstructured.Unstructured
	// Mapping is the object's API resource; nil until mapped.
	Mapping *meta.RESTMapping
	// Info is the resource builder's view of the object (its REST client
	// and mapping) for objects read with ReadLive or ReadFiles; nil
	// otherwise.
	Info *resource.Info
}

// FromUnstructured wraps objects built in a program (no file) for apply.
func FromUnstructured(objs []*unstructured.Unstructured) []*Object {
	out := make([]*Object, len(objs))
	for i, u := range objs {
		out[i] = &Object{Index: i + 1, Obj: u}
	}
	return out
}

// Name names the object the way kubectl prints it in a result line:
// kind.group/name.
func (o *Object) Name() string {
	gk := o.Obj.GroupVersionKind().GroupKind()
	if o.Info != nil && o.Info.Mapping != nil {
		gk = o.Info.Mapping.GroupVersionKind.GroupKind()
	}
	ref := strings.ToLower(gk.Kind)
	if gk.Group != "" {
		ref += "." + gk.Group
	}
	return ref + "/" + o.Obj.GetName()
}

// Ref is Name with the namespace, when there is one: kind.group/name -n ns.
func (o *Object) Ref() string {
	if ns := o.Obj.GetNamespace(); ns != "" {
		return o.Name() + " -n " + ns
	}
	return o.Name()
}

// Error is a failure of one object, naming the object and, when it came
// from one, the file.
type Error struct {
	Source string
	Ref    string
	Err    error
}

func (e *Error) Error() string {
	if e.Source == "" {
		return fmt.Sprintf("%s: %v", e.Ref, e.Err)
	}
	return fmt.Sprintf("%s (from %s): %v", e.Ref, e.Source, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// ErrorOf wraps err as a failure of o (nil stays nil).
func ErrorOf(o *Object, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Source: o.Source, Ref: o.Ref(), Err: err}
}
