package apply

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/kapply/kapply/pkg/load"
)

// forceReplaces tells whether Force answers a failed patch by replacing the
// object: as kubectl apply --force does (patcher.deleteAndCreate), when the
// server refused the patch as invalid (an immutable field: a Deployment's
// selector, a Job's template) or kept reporting a conflict.
func (r *runner) forceReplaces(err error) bool {
	return r.opts.Force && r.opts.DryRun == NoDryRun && (apierrors.IsInvalid(err) || apierrors.IsConflict(err))
}

// replace deletes the live object (GracePeriod, Cascade), waits until it is
// gone (Timeout) and creates the file's object with its record. If that
// create fails, the original is created again, so a bad file does not
// leave the object deleted; the create's error is reported either way.
func (r *runner) replace(ctx context.Context, client dynamic.ResourceInterface, o *load.Object, live *unstructured.Unstructured, patchErr error) Event {
	failed := func(err error) Event {
		return Event{Object: o, Outcome: Failed, Err: fmt.Errorf("%w; Options.Force: %w", patchErr, err)}
	}
	if err := r.deleteForReplace(ctx, client, live); err != nil {
		return failed(fmt.Errorf("deleting the object to create it again: %w", err))
	}
	if err := r.awaitDeleted(ctx, client, live); err != nil {
		return failed(err)
	}
	body, warnings, err := r.withLastApplied(o, nil)
	if err != nil {
		return failed(err)
	}
	pruneNulls(body.Object)
	// A resourceVersion the file sets belongs to the deleted object.
	body.SetResourceVersion("")
	created, err := r.createOnce(ctx, client, body)
	if err == nil {
		return Event{Object: o, Outcome: Configured, Result: created, Warnings: warnings}
	}
	if _, restoreErr := r.createOnce(ctx, client, original(live)); restoreErr != nil {
		return Event{Object: o, Outcome: Failed, Warnings: warnings, Err: fmt.Errorf(
			"an error occurred force-replacing the existing object with the newly provided one: %w; additionally, an error occurred attempting to restore the original object: %w",
			err, restoreErr)}
	}
	return Event{Object: o, Outcome: Failed, Warnings: warnings, Err: fmt.Errorf("creating the object again (Options.Force): %w; the original object was restored", err)}
}

// deleteForReplace deletes the object that was read, and no newer one.
func (r *runner) deleteForReplace(ctx context.Context, client dynamic.ResourceInterface, live *unstructured.Unstructured) error {
	uid := live.GetUID()
	opts := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}
	if r.opts.GracePeriod >= 0 {
		seconds := int64(r.opts.GracePeriod)
		opts.GracePeriodSeconds = &seconds
	}
	if r.opts.Cascade != "" {
		opts.PropagationPolicy = &r.opts.Cascade
	}
	err := r.retryTransient(ctx, func() error { return client.Delete(ctx, live.GetName(), opts) })
	if apierrors.IsNotFound(err) {
		return nil // someone deleted it already
	}
	return err
}

// awaitDeleted polls, as kubectl does, until the object that was read is
// gone, for at most the run's timeout.
func (r *runner) awaitDeleted(ctx context.Context, client dynamic.ResourceInterface, live *unstructured.Unstructured) error {
	gone := func(ctx context.Context) (bool, error) {
		current, err := client.Get(ctx, live.GetName(), metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return true, nil
		case err != nil:
			return false, nil // a passing failure; the timeout bounds the wait
		}
		return current.GetUID() != live.GetUID(), nil
	}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, r.timeout(), true, gone); err != nil {
		return fmt.Errorf("waiting for the deleted object to be gone (Options.Timeout %s): %w", r.timeout(), err)
	}
	return nil
}

// createOnce creates body, retrying only answers that say "try again".
func (r *runner) createOnce(ctx context.Context, client dynamic.ResourceInterface, body *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	var created *unstructured.Unstructured
	err := r.retryTransient(ctx, func() error {
		var err error
		created, err = client.Create(ctx, body, metav1.CreateOptions{FieldManager: r.opts.FieldManager, FieldValidation: r.opts.FieldValidation})
		return err
	})
	return created, err
}

// original is the live object as a create can take it back: without the
// resourceVersion and uid of the deleted one.
func original(live *unstructured.Unstructured) *unstructured.Unstructured {
	out := live.DeepCopy()
	out.SetResourceVersion("")
	out.SetUID("")
	return out
}
