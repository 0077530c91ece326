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

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/ownership"
)

// lastAppliedFieldPath is where the client-side record lives in managedFields.
var lastAppliedFieldPath = ownership.SMDSet(fieldpath.Fields("metadata", "annotations", lastapplied.Annotation))

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
func (r *runner) upgradeConflicts(ctx context.Context, client dynamic.ResourceInterface, o *object, live *unstructured.Unstructured, data []byte, manager string) error {
	if manager == ServerSideFieldManager || r.opts.ForceConflicts {
		return nil
	}
	if patch, err := r.upgradePatch(o, live, manager); err != nil || patch == nil {
		return nil // nothing to upgrade, or upgradeOnce reports the error
	}
	// data, the apply patch of another manager than kubectl's, carries no
	// record (planServerSide), which client-side apply owns.
	opts := metav1.PatchOptions{FieldManager: manager, DryRun: []string{metav1.DryRunAll}, FieldValidation: r.opts.FieldValidation}
	err := r.retryTransient(ctx, func() error {
		_, err := client.Patch(ctx, live.GetName(), types.ApplyPatchType, data, opts)
		return err
	})
	if apierrors.IsConflict(err) {
		return err
	}
	return nil // any other failure shows in the apply itself
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
