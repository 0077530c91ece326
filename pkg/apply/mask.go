package apply

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Secret values never leave the library in text: every error and warning
// an operation hands out — events (returned and given to OnEvent),
// PlanFailures, the results of the ownership operations, the error an
// operation returns — is masked here, at the one place it leaves, for the
// Secrets the run knows (runner.secrets: the objects it was given, and the
// objects of each event it masks: the file's, the live one, the server's
// result, each with its last-applied record). A program that logs
// event.Err prints no value. The masking itself is pkg/cluster's Secrets.

// know adds the Secrets among objs to those the run masks.
func (r *runner) know(objs ...*unstructured.Unstructured) {
	r.secrets.Add(objs...)
}

// masked is ev with its error and warnings masked. An event with neither,
// or masked already, is returned as it is, and its objects are not read.
func (r *runner) masked(ev Event) Event {
	if ev.masked || ev.Err == nil && len(ev.Warnings) == 0 {
		return ev
	}
	r.know(ev.Object, ev.Live, ev.Result)
	ev.Err = r.maskError(ev.Err)
	ev.Warnings = r.secrets.Texts(ev.Warnings)
	ev.masked = true
	return ev
}

// maskedAll masks each event in place and returns events.
func (r *runner) maskedAll(events []Event) []Event {
	for i := range events {
		events[i] = r.masked(events[i])
	}
	return events
}

// maskedResult masks a record write's error and warnings in place.
func (r *runner) maskedResult(res *RecordResult) {
	if res.Err == nil && len(res.Warnings) == 0 {
		return
	}
	r.know(res.Object, res.Live)
	res.Err = r.maskError(res.Err)
	res.Warnings = r.secrets.Texts(res.Warnings)
}

// maskError is err masked (cluster's Secrets.Error). An *ObjectError, the
// error a program takes apart with errors.As to read Ref and Source, is
// a copy whose Err is masked: masking only above it would leave the
// server's text unmasked in what errors.As finds, and in its StatusError.
func (r *runner) maskError(err error) error {
	objErr, isObjectError := err.(*ObjectError)
	if !isObjectError {
		return r.secrets.Error(err)
	}
	masked := r.secrets.Error(objErr.Err)
	if masked == objErr.Err {
		return err
	}
	return &ObjectError{Source: objErr.Source, Ref: objErr.Ref, Err: masked}
}
