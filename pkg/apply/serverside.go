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

	"github.com/kapply/kapply/pkg/cluster"
	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/ownership"
)

// lastAppliedFieldPath is where the client-side record lives in managedFields.
var lastAppliedFieldPath = ownership.SMDSet(fieldpath.Fields("metadata", "annotations", lastapplied.Annotation))

// serverSideApply sends the file as an apply patch. Under kubectl's
// manager the object keeps a last-applied record, so a later switch back to
// client-side apply still knows what the file set: kept as kubectl keeps it
// (see applyAsKubectl), or carried in the patch when only a packed one
// fits; under another manager it has none, as with kubectl. An object last written by client-side apply first has its
// managedFields upgraded (client-go's csaupgrade, as kubectl does, but only
// the fields the record names: see upgradePatch), so fields the file drops
// from now on are deleted rather than left to the old client-side manager.
func (r *runner) serverSideApply(ctx context.Context, client dynamic.ResourceInterface, o *object, live *unstructured.Unstructured) Event {
	body, warnings, err := r.serverSideBody(o, live)
	if err != nil {
		return o.event(Event{Outcome: Failed, Err: err})
	}
	if live != nil {
		if err := r.upgradeConflicts(ctx, client, o, live, body); err != nil {
			return o.event(Event{Outcome: Failed, Err: explainConflicts(o, live, err), Warnings: warnings})
		}
		if live, err = r.upgradeClientSideOwnership(ctx, client, o, live); err != nil {
			return o.event(Event{Outcome: Failed, Err: err, Warnings: warnings})
		}
	}
	var applied *unstructured.Unstructured
	switch {
	case r.redactsSecretRecord(o):
		applied, err = r.sendApply(ctx, client, withoutRecord(body), r.opts.FieldManager)
		warnings = append(warnings, secretRecordWarning(o, applied)...)
	case r.recordAsKubectl(body):
		applied, err = r.applyAsKubectl(ctx, client, live, body)
	case r.opts.FieldManager != ServerSideFieldManager:
		// As kubectl: a manager of the user's own applies without the
		// record, and once it owns the record (csaupgrade above) the server
		// drops it — the object has moved to server-side apply.
		applied, err = r.sendApply(ctx, client, withoutRecord(body), r.opts.FieldManager)
	default:
		applied, err = r.sendApply(ctx, client, body, r.opts.FieldManager)
	}
	if err != nil {
		return o.event(Event{Outcome: Failed, Err: explainConflicts(o, live, err), Warnings: warnings})
	}
	return o.event(Event{Outcome: writeOutcome(live, applied, r.opts.DryRun == cluster.ServerDryRun, false), Result: applied, Live: live, Warnings: warnings})
}

// sendApply sends body as an apply patch of manager, in the run's dry-run
// mode, with the run's field validation and --force-conflicts.
func (r *runner) sendApply(ctx context.Context, client dynamic.ResourceInterface, body *unstructured.Unstructured, manager string) (*unstructured.Unstructured, error) {
	data, err := body.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encoding the apply patch: %w", err)
	}
	force := r.opts.ForceConflicts
	opts := metav1.PatchOptions{FieldManager: manager, Force: &force, DryRun: r.serverDryRun(), FieldValidation: r.opts.FieldValidation}
	var applied *unstructured.Unstructured
	err = r.retryTransient(ctx, func() error {
		applied, err = client.Patch(ctx, body.GetName(), types.ApplyPatchType, data, opts)
		return err
	})
	return applied, refusedDryRun(body, opts.DryRun, err)
}

// withoutRecord is body without its last-applied annotations.
func withoutRecord(body *unstructured.Unstructured) *unstructured.Unstructured {
	body = body.DeepCopy()
	annotations := body.GetAnnotations()
	delete(annotations, lastapplied.Annotation)
	delete(annotations, lastapplied.CompactAnnotation)
	if len(annotations) == 0 {
		annotations = nil
	}
	body.SetAnnotations(annotations)
	return body
}

// serverSideBody is the apply patch's object: the file with its
// last-applied record, or without one when no record fits the annotation
// limit — server-side apply needs none, and kubectl --server-side writes none.
func (r *runner) serverSideBody(o *object, live *unstructured.Unstructured) (*unstructured.Unstructured, []string, error) {
	body, warnings, err := r.withLastApplied(o, live)
	if !errors.Is(err, lastapplied.ErrTooLarge) {
		return body, warnings, err
	}
	return withoutRecord(o.Obj), []string{fmt.Sprintf("%s: applied server-side without a last-applied record: %v; "+
		"a later client-side apply will not know which fields this file set", o.Ref(), err)}, nil
}

// upgradeConflicts is the conflict kubectl gets when a field manager of
// the user's own takes over fields client-side apply set to other values.
// kubectl upgrades client-side ownership only after its apply patch
// succeeded, and the API server waives conflicts with client-side apply's
// fields for the manager "kubectl" alone; kapply upgrades first, which
// would hide them. So, for another manager and without --force-conflicts,
// the patch (without the record, which client-side apply owns) is first
// sent as a server dry run: a conflict is the answer.
func (r *runner) upgradeConflicts(ctx context.Context, client dynamic.ResourceInterface, o *object, live, body *unstructured.Unstructured) error {
	if r.opts.FieldManager == ServerSideFieldManager || r.opts.ForceConflicts {
		return nil
	}
	if patch, err := r.upgradePatch(o, live, r.opts.FieldManager); err != nil || patch == nil {
		return nil // nothing to upgrade, or upgradeClientSideOwnership reports the error
	}
	data, err := withoutRecord(body).MarshalJSON()
	if err != nil {
		return fmt.Errorf("encoding the apply patch: %w", err)
	}
	opts := metav1.PatchOptions{FieldManager: r.opts.FieldManager, DryRun: []string{metav1.DryRunAll}, FieldValidation: r.opts.FieldValidation}
	err = r.retryTransient(ctx, func() error {
		_, err := client.Patch(ctx, body.GetName(), types.ApplyPatchType, data, opts)
		return err
	})
	if apierrors.IsConflict(err) {
		return err
	}
	return nil // any other failure shows in the apply itself
}

// upgradeClientSideOwnership moves the fields owned by client-side apply
// that its record names to the server-side manager (see clientSideManagers
// and upgradePatch). The patch is guarded
// by resourceVersion; on a conflict the object is read again.
func (r *runner) upgradeClientSideOwnership(ctx context.Context, client dynamic.ResourceInterface, o *object, live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	for attempt := 0; attempt <= maxConflictRetries; attempt++ {
		patch, err := r.upgradePatch(o, live, r.opts.FieldManager)
		if err != nil || patch == nil {
			return live, err
		}
		if r.opts.DryRun == cluster.ServerDryRun {
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

// clientSideManagers are the managers whose Update entries hold client-side
// apply's fields: those that wrote the last-applied record (kubectl's
// choice), and always kubectl's client-side manager and the one earlier
// kapply versions wrote under. An object applied by both tools in turn has
// fields under each, and the record under only the last of them: a field
// left with another would stay, stuck, when the file drops it.
func clientSideManagers(live *unstructured.Unstructured) sets.Set[string] {
	managers := sets.New(ClientSideFieldManager, LegacyFieldManager)
	for _, entry := range csaupgrade.FindFieldsOwners(live.GetManagedFields(), metav1.ManagedFieldsOperationUpdate, lastAppliedFieldPath) {
		managers.Insert(entry.Manager)
	}
	return managers
}

// explainConflicts turns the server's 409 on an apply patch into an error
// that names each field and its manager, and the way out; a 409 without
// fields is a stale metadata.resourceVersion in the file.
func explainConflicts(o *object, live *unstructured.Unstructured, err error) error {
	var status apierrors.APIStatus
	switch {
	case !apierrors.IsConflict(err) || !errors.As(err, &status):
		return fmt.Errorf("applying server-side: %w", err)
	case status.Status().Details == nil || len(status.Status().Details.Causes) == 0:
		if live != nil && o.Obj.GetResourceVersion() != "" {
			err = staleFileError(o, live, err)
		}
		return fmt.Errorf("applying server-side: %w", err)
	}
	var fields []string
	for _, cause := range status.Status().Details.Causes {
		fields = append(fields, fmt.Sprintf("%s (%s)", cause.Field, cause.Message))
	}
	return fmt.Errorf("applying server-side: fields owned by other managers: %s; "+
		"set WriteOptions.ForceConflicts to take them, or drop them from the file to leave them", strings.Join(fields, ", "))
}
