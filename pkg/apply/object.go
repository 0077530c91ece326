package apply

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/plan"
	"github.com/kapply/kapply/pkg/shown"
)

// object is one object of the input as a run handles it: the object itself
// (prepare settles its namespace in place), where it came from, and its API
// resource once prepare has mapped it.
type object struct {
	Obj    *unstructured.Unstructured
	Source plan.Source
	// Mapping is nil until mapped.
	Mapping *meta.RESTMapping
	// key is a Secret's namespace's digest key, once the run has read it
	// (keyObject).
	key lastapplied.DigestKey
}

// objects are in's objects as a run handles them, with their Sources (zero
// when in has none). Sources that are not one per object are the caller's
// mistake, refused before anything is sent.
func (in Input) objects() ([]*object, error) {
	if in.Sources != nil && len(in.Sources) != len(in.Objects) {
		return nil, fmt.Errorf("Input has %d Sources for %d Objects: give one per object, or none", len(in.Sources), len(in.Objects))
	}
	out := make([]*object, len(in.Objects))
	for i, u := range in.Objects {
		if err := checkObject(fmt.Sprintf("Input.Objects[%d]", i), u); err != nil {
			return nil, err
		}
		out[i] = &object{Obj: u}
		if in.Sources != nil {
			out[i].Source = in.Sources[i]
		}
	}
	return out, nil
}

// readAll is in's objects for an operation that takes every object or none
// (the ownership operations): an error of in is the operation's.
func (in Input) readAll() ([]*object, error) {
	if len(in.Errors) > 0 {
		return nil, errors.Join(in.Errors...)
	}
	return in.objects()
}

// event is ev about o: with o's object, source and mapping.
func (o *object) event(ev Event) Event {
	ev.Object, ev.Source, ev.Mapping = o.Obj, o.Source, o.Mapping
	return ev
}

func (o *object) Name() string { return ObjectName(o.Obj) }

func (o *object) Ref() string { return ObjectRef(o.Obj) }

// errorOf wraps err as a failure of o (nil stays nil).
func errorOf(o *object, err error) error { return ErrorOf(o.Obj, o.Source, err) }

// ObjectName names obj the way kubectl prints it in a result line:
// kind.group/name. An event about no object (a prune step that failed)
// has a nil Object: its name is empty. Kind and name came from a file:
// each is quoted when it holds a character that does not show as itself
// (shown.Text), so that the line can neither be erased nor forge another.
func ObjectName(obj *unstructured.Unstructured) string {
	if obj == nil {
		return ""
	}
	return ObjectKind(obj) + "/" + shown.Text(obj.GetName())
}

// ObjectKind is the kind part of ObjectName: kind.group in lower case.
func ObjectKind(obj *unstructured.Unstructured) string {
	gk := obj.GroupVersionKind().GroupKind()
	kind := strings.ToLower(gk.Kind)
	if gk.Group != "" {
		kind += "." + gk.Group
	}
	return shown.Text(kind)
}

// ObjectRef is ObjectName with the namespace, when there is one:
// kind.group/name -n ns.
func ObjectRef(obj *unstructured.Unstructured) string {
	if obj == nil {
		return ""
	}
	if ns := obj.GetNamespace(); ns != "" {
		return ObjectName(obj) + " -n " + shown.Text(ns)
	}
	return ObjectName(obj)
}

// ObjectError is a failure of one object, naming the object and, when it
// came from one, the file.
type ObjectError struct {
	Source plan.Source
	// Ref is ObjectRef of the object.
	Ref string
	Err error
}

func (e *ObjectError) Error() string {
	if e.Source.File == "" {
		return fmt.Sprintf("%s: %v", e.Ref, e.Err)
	}
	return fmt.Sprintf("%s (from %s): %v", e.Ref, shown.Text(e.Source.File), e.Err)
}

func (e *ObjectError) Unwrap() error { return e.Err }

// ErrorOf wraps err as a failure of obj, read from src (nil stays nil).
func ErrorOf(obj *unstructured.Unstructured, src plan.Source, err error) error {
	if err == nil {
		return nil
	}
	return &ObjectError{Source: src, Ref: ObjectRef(obj), Err: err}
}
