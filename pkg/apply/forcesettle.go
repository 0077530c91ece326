package apply

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/kapply/kapply/pkg/lastapplied"
)

// settled is what settleReplace found, or did, after a replace that did not
// finish.
type settled int

const (
	// notSettled: neither the original nor the file's object exists, or
	// kapply could not tell; the saved copy stays.
	notSettled settled = iota
	// originalKept: the original was never deleted (a delete whose answer
	// was lost, which may yet be done: the saved copy stays).
	originalKept
	// originalRestored: the original was created again.
	originalRestored
	// fileObjectCreated: the create of the file's object went through,
	// although its answer was lost (an interrupted run).
	fileObjectCreated
)

// settleReplace makes the original exist again after a replace that failed
// or was interrupted (cause), unless it or the file's object (body) still
// or already does. It runs on a context of its own, bounded by
// Options.Timeout: it is what runs once SIGINT has ended ctx in the middle
// of a replace, and must not lose the object for it.
func (r *runner) settleReplace(ctx context.Context, client dynamic.ResourceInterface, o *object, live, body *unstructured.Unstructured, saved backup, cause error) Event {
	own, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.timeout())
	defer cancel()
	state, current, err := r.reinstate(own, client, o, live, body)
	ev := o.event(Event{Outcome: Failed})
	switch state {
	case originalKept:
		ev.Err = fmt.Errorf("%w; the object was not deleted (a copy stays in %s)", cause, saved.path)
		return ev
	case notSettled:
		ev.Err = fmt.Errorf("an error occurred force-replacing the existing object with the newly provided one: %w; "+
			"additionally, an error occurred attempting to restore the original object: %w; %s", cause, err, saved.restoreHint())
		return ev
	case fileObjectCreated:
		return replaced(o, current, nil, saved)
	}
	ev.Err = fmt.Errorf("%w; the original object was restored", cause)
	if err := saved.remove(); err != nil {
		ev.Warnings = append(ev.Warnings, fmt.Sprintf("%s: %v", o.Ref(), err))
	}
	return ev
}

// reinstate reads the object: still the original, and not being deleted, it
// is kept; being deleted, it is awaited until gone; gone, the original is
// created again — unless the file's object is there.
func (r *runner) reinstate(ctx context.Context, client dynamic.ResourceInterface, o *object, live, body *unstructured.Unstructured) (settled, *unstructured.Unstructured, error) {
	for attempt := 0; ; attempt++ {
		current, err := r.get(ctx, client, o)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return notSettled, nil, fmt.Errorf("reading the object: %w", err)
		case current.GetUID() == live.GetUID() && current.GetDeletionTimestamp() == nil:
			return originalKept, current, nil
		case current.GetUID() == live.GetUID():
			if err := r.awaitDeleted(ctx, client, live); err != nil {
				return notSettled, nil, err
			}
		case sameRecord(current, body):
			return fileObjectCreated, current, nil
		default:
			return notSettled, nil, fmt.Errorf("another object of that name (uid %s) was created meanwhile", current.GetUID())
		}
		restored, err := r.createOnce(ctx, client, original(live))
		switch {
		case err == nil:
			return originalRestored, restored, nil
		// An object was created since the read: the file's, if its create's
		// answer was the one lost. Read it once more.
		case !apierrors.IsAlreadyExists(err) || attempt > 0:
			return notSettled, nil, err
		}
	}
}

// sameRecord tells whether current was created from body: it carries
// body's last-applied record.
func sameRecord(current, body *unstructured.Unstructured) bool {
	have, want := current.GetAnnotations(), body.GetAnnotations()
	for _, key := range []string{lastapplied.Annotation, lastapplied.CompactAnnotation} {
		if want[key] != "" {
			return have[key] == want[key]
		}
	}
	return false
}
