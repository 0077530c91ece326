package apply

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/csaupgrade"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapply/kapply/pkg/lastapplied"
)

// lastAppliedFieldPath is where the client-side record lives in managedFields.
var lastAppliedFieldPath = fieldpath.NewSet(fieldpath.MakePathOrDie("metadata", "annotations", lastapplied.Annotation))

// serverSideApply sends the file as an apply patch. The file carries its
// last-applied record too, so a later switch back to client-side apply
// still knows what the file set. An object last written by client-side
// apply first has its managedFields upgraded (client-go's csaupgrade, as
// kubectl does), so fields the file drops from now on are deleted rather
// than left to the old client-side manager.
func (r *runner) serverSideApply(ctx context.Context, client dynamic.ResourceInterface, o *Object, live *unstructured.Unstructured) Event {
	body, warnings, err := withLastApplied(o)
	if err != nil {
		return Event{Object: o, Outcome: Failed, Err: err}
	}
	if live != nil {
		if live, err = r.upgradeClientSideOwnership(ctx, client, live); err != nil {
			return Event{Object: o, Outcome: Failed, Err: err, Warnings: warnings}
		}
	}
	data, err := body.MarshalJSON()
	if err != nil {
		return Event{Object: o, Outcome: Failed, Err: fmt.Errorf("encoding the apply patch: %w", err)}
	}
	force := r.opts.ForceConflicts
	var applied *unstructured.Unstructured
	err = r.retryTransient(ctx, func() error {
		applied, err = client.Patch(ctx, o.Obj.GetName(), types.ApplyPatchType, data,
			metav1.PatchOptions{FieldManager: r.opts.FieldManager, Force: &force, DryRun: r.serverDryRun()})
		return err
	})
	if err != nil {
		return Event{Object: o, Outcome: Failed, Err: explainConflicts(err), Warnings: warnings}
	}
	return Event{Object: o, Outcome: appliedOutcome(live, applied), Result: applied, Live: live, Warnings: warnings}
}

// appliedOutcome tells created, configured and unchanged apart by the
// resourceVersion, which the server only moves when it stores a change.
func appliedOutcome(live, applied *unstructured.Unstructured) Outcome {
	switch {
	case live == nil:
		return Created
	case live.GetResourceVersion() == applied.GetResourceVersion():
		return Unchanged
	}
	return Configured
}

// upgradeClientSideOwnership moves the fields owned by the client-side
// managers that wrote the last-applied record to the server-side manager.
// The patch is guarded by resourceVersion; on a conflict the object is read
// again.
func (r *runner) upgradeClientSideOwnership(ctx context.Context, client dynamic.ResourceInterface, live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	for attempt := 0; attempt <= maxConflictRetries; attempt++ {
		owners := csaupgrade.FindFieldsOwners(live.GetManagedFields(), metav1.ManagedFieldsOperationUpdate, lastAppliedFieldPath)
		managers := sets.New[string]()
		for _, entry := range owners {
			managers.Insert(entry.Manager)
		}
		patch, err := csaupgrade.UpgradeManagedFieldsPatch(live, managers, r.opts.FieldManager)
		if err != nil || patch == nil {
			return live, err
		}
		if r.opts.DryRun == ServerDryRun {
			return live, nil
		}
		upgraded, err := client.Patch(ctx, live.GetName(), types.JSONPatchType, patch, metav1.PatchOptions{})
		// The patch tests resourceVersion first: a concurrent write fails
		// that test, which the server reports as a conflict.
		if !apierrors.IsConflict(err) {
			if err != nil {
				return nil, fmt.Errorf("upgrading client-side field ownership: %w", err)
			}
			return upgraded, nil
		}
		if live, err = client.Get(ctx, live.GetName(), metav1.GetOptions{}); err != nil {
			return nil, fmt.Errorf("reading the object again after a conflict: %w", err)
		}
	}
	return nil, fmt.Errorf("upgrading client-side field ownership: the object kept changing")
}

// explainConflicts turns the server's 409 on an apply patch into an error
// that names each field and its manager, and the way out.
func explainConflicts(err error) error {
	var status apierrors.APIStatus
	if !apierrors.IsConflict(err) || !errors.As(err, &status) || status.Status().Details == nil {
		return fmt.Errorf("applying server-side: %w", err)
	}
	var fields []string
	for _, cause := range status.Status().Details.Causes {
		fields = append(fields, fmt.Sprintf("%s (%s)", cause.Field, cause.Message))
	}
	return fmt.Errorf("applying server-side: fields owned by other managers: %s; "+
		"pass --force-conflicts to take them, or drop them from the file to leave them", strings.Join(fields, ", "))
}
