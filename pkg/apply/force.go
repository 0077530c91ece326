package apply

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/kapply/kapply/pkg/cluster"
	"github.com/kapply/kapply/pkg/delete"
)

// forceReplaces tells whether Force answers a failed patch by replacing the
// object: as kubectl apply --force does (patcher.deleteAndCreate), when the
// server refused the patch as invalid (an immutable field: a Deployment's
// selector, a Job's template) or kept reporting a conflict.
func (r *runner) forceReplaces(err error) bool {
	return r.opts.Force != nil && r.opts.DryRun == cluster.NoDryRun && (apierrors.IsInvalid(err) || apierrors.IsConflict(err))
}

// replace deletes the live object (GracePeriod, Cascade), waits until it is
// gone (Timeout) and creates the file's object with its record, as kubectl
// does, in an order that never leaves the object only in memory:
//   - a server dry run of the create goes first, so what validation or
//     admission denies is refused before anything is deleted (kubectl
//     deletes, then the create and its restore are both denied);
//   - the original is saved to a file (see backup), its path told to
//     ForceOptions.OnBackup before the delete;
//   - if the delete, the wait or the create fails or is interrupted,
//     settleReplace makes the original exist again, on a context SIGINT
//     does not end.
//
// The file is removed once the new object or the restored original exists.
func (r *runner) replace(ctx context.Context, client dynamic.ResourceInterface, o *object, live *unstructured.Unstructured, patchErr error) Event {
	failed := func(err error) Event {
		return o.event(Event{Outcome: Failed, Err: fmt.Errorf("%w; Options.Force: %w", patchErr, err)})
	}
	body, warnings, err := r.withLastApplied(o, nil)
	if err != nil {
		return failed(err)
	}
	pruneNulls(body.Object)
	// A resourceVersion the file sets belongs to the deleted object.
	body.SetResourceVersion("")
	if err := r.createAdmitted(ctx, client, body, live); err != nil {
		return failed(fmt.Errorf("not deleting the object: %w", err))
	}
	saved, err := r.saveBackup(o, live)
	if err != nil {
		return failed(fmt.Errorf("not deleting the object: %w", err))
	}
	if err := ctx.Err(); err != nil {
		return failed(errors.Join(fmt.Errorf("not deleting the object: %w", err), saved.remove()))
	}
	settle := func(cause error) Event {
		ev := r.settleReplace(ctx, client, o, live, body, saved, cause)
		ev.Warnings = append(warnings, ev.Warnings...)
		return ev
	}
	switch err := r.deleteForReplace(ctx, client, live); {
	case serverRefused(err):
		return failed(errors.Join(fmt.Errorf("deleting the object to create it again: %w", err), saved.remove()))
	case err != nil:
		return settle(fmt.Errorf("deleting the object to create it again: %w", err))
	}
	created, err := r.createAfterDelete(ctx, client, live, body)
	if err != nil {
		return settle(err)
	}
	return replaced(o, created, warnings, saved)
}

// replaced is the event of an object created in place of the deleted one,
// whose saved copy is no longer needed.
func replaced(o *object, created *unstructured.Unstructured, warnings []string, saved backup) Event {
	if err := saved.remove(); err != nil {
		warnings = append(warnings, fmt.Sprintf("%s: %v", o.Ref(), err))
	}
	return o.event(Event{Outcome: Configured, Result: created, Warnings: warnings})
}

// serverRefused tells a request the server answered with an error, so
// that nothing was done, from one whose answer was lost (interrupted, the
// connection cut), which may have been done. Retries given up on, by the
// retry window or an interruption, count as lost: an earlier attempt's
// answer may have been lost, and their last answer ("try again", a 504)
// does not say the request was not done.
func serverRefused(err error) bool {
	var status apierrors.APIStatus
	var gaveUp *cluster.RetryError
	return errors.As(err, &status) && !answerWasLost(err) && !errors.As(err, &gaveUp) &&
		!errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// createAdmitted asks the server whether it would create body, by a dry run
// of the create while the live object still exists. The server checks the
// name last, after validation and validating admission (webhooks,
// ValidatingAdmissionPolicy), so AlreadyExists means body passed them; any
// other refusal would also answer the real create, after the delete —
// except a Service's ports and IPs that live itself holds (see
// withoutLiveAllocations).
func (r *runner) createAdmitted(ctx context.Context, client dynamic.ResourceInterface, body, live *unstructured.Unstructured) error {
	dryRun := func(obj *unstructured.Unstructured) error {
		return r.retryTransient(ctx, func() error {
			_, err := client.Create(ctx, obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll},
				FieldManager: r.opts.FieldManager, FieldValidation: r.opts.FieldValidation})
			return err
		})
	}
	err := dryRun(body)
	if freed := withoutLiveAllocations(body, live); apierrors.IsInvalid(err) && freed != nil {
		err = dryRun(freed)
	}
	// nil: the object is gone already, and the create would be taken.
	if err == nil || apierrors.IsAlreadyExists(err) {
		return nil
	}
	return fmt.Errorf("the server refuses to create it from the file (a server dry run of the create): %w", conciseServerError(err))
}

// createAfterDelete waits until the deleted object is gone and creates
// body.
func (r *runner) createAfterDelete(ctx context.Context, client dynamic.ResourceInterface, live, body *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if err := r.awaitDeleted(ctx, client, live); err != nil {
		return nil, err
	}
	created, err := r.createOnce(ctx, client, body)
	if err != nil {
		return nil, fmt.Errorf("creating the object again (Options.Force): %w", err)
	}
	return created, nil
}

// deleteForReplace deletes the object that was read, and no newer one.
func (r *runner) deleteForReplace(ctx context.Context, client dynamic.ResourceInterface, live *unstructured.Unstructured) error {
	req := delete.Request{Cascade: r.opts.Force.Cascade, UID: live.GetUID()}
	if r.opts.Force.GracePeriod >= 0 {
		seconds := int64(r.opts.Force.GracePeriod)
		req.GracePeriod = &seconds
	}
	opts := req.Options()
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
