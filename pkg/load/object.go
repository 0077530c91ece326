package load

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/kapply/kapply/pkg/plan"
)

// Object is one object with where it came from: read from a file for
// apply, diff and delete, or named by a file or TYPE/NAME and read from the
// server for the ownership commands.
type Object struct {
	// Source is the file (or URL, or "STDIN") the object was read from or
	// named by; empty for objects read by TYPE/NAME.
	Source string
	// Index is the object's place among those read from Source, from 1
	// (empty documents are not counted; a List counts its items).
	Index int
	// Line is the line, from 1, of the first content of the object's
	// document in Source (a List's items share it); 0 when unknown (read
	// through kustomize, or by the resource builder).
	Line int
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

// Where is where the object came from, as pkg/apply takes it.
func (o *Object) Where() plan.Source {
	return plan.Source{File: o.Source, Index: o.Index, Line: o.Line}
}

// Split is objects as pkg/apply takes them: the objects, and where each
// came from.
func Split(objects []*Object) ([]*unstructured.Unstructured, []plan.Source) {
	objs := make([]*unstructured.Unstructured, len(objects))
	sources := make([]plan.Source, len(objects))
	for i, o := range objects {
		objs[i], sources[i] = o.Obj, o.Where()
	}
	return objs, sources
}
