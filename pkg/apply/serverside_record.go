package apply

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/csaupgrade"

	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/plan"
)

// lastAppliedFieldManager is kubectl's manager of the last-applied record
// alone, under server-side apply.
const lastAppliedFieldManager = "kubectl-last-applied"

// applyAsKubectl applies the item (the file without its record, the
// record being shared: plan.Item.ShareRecord) as kubectl
// --server-side does. The API server itself rewrites the record of an
// object that has one on every apply patch of the manager "kubectl" (its
// lastAppliedUpdater), so the patch leaves it out; the record is owned by
// kubectl-last-applied instead, or the patch would delete it. Sharing that
// ownership costs one more request, once per object: before the patch when
// the object has a record no apply manager owns yet (it was client-side
// applied), after it when the object had none. kubectl writes no record in
// the second case; kapply writes the one the server would, so that a later
// client-side apply still knows what the file set. kapply and kubectl then
// take turns without losing the record or reporting changes. A server dry
// run sends the patch alone, as kubectl diff --server-side does: the record
// requests would not build on it.
func (r *runner) applyAsKubectl(ctx context.Context, client dynamic.ResourceInterface, o *object, it plan.Item, live *unstructured.Unstructured, rv string) (*unstructured.Unstructured, error) {
	if live != nil && len(recordApplyOwners(live)) == 0 {
		if record, has := live.GetAnnotations()[lastapplied.Annotation]; has {
			shared, err := r.applyRecord(ctx, client, live, record)
			if err != nil {
				return nil, err
			}
			if rv != "" {
				rv = shared.GetResourceVersion()
			}
		}
	}
	if live != nil && hasRecord(live) {
		// No resourceVersion precondition to an object that keeps the
		// record: the API server copies the body of an apply under
		// kubectl's manager into the record (its last-applied updater),
		// precondition included, so the record would claim
		// metadata.resourceVersion and change on every apply (a saved
		// plan's re-apply of an unchanged object configured it each
		// time). A writer between Execute's check and this write is
		// answered by the server's field-ownership conflicts instead of a
		// 409 (docs/plans.md).
		rv = ""
	}
	applied, err := r.writeItem(ctx, client, o, it, rv, nil)
	if err != nil {
		return nil, err
	}
	if _, has := applied.GetAnnotations()[lastapplied.Annotation]; has {
		return applied, nil
	}
	body, err := applyBody(it)
	if err != nil {
		return nil, err
	}
	record, err := runtime.Encode(unstructured.UnstructuredJSONScheme, body)
	if err != nil {
		return nil, fmt.Errorf("encoding the last-applied record: %w", err)
	}
	return r.applyRecord(ctx, client, applied, string(record))
}

// recordApplyOwners are the apply managers other than kubectl's that own
// the object's last-applied record.
func recordApplyOwners(obj *unstructured.Unstructured) []metav1.ManagedFieldsEntry {
	var owners []metav1.ManagedFieldsEntry
	for _, entry := range csaupgrade.FindFieldsOwners(obj.GetManagedFields(), metav1.ManagedFieldsOperationApply, lastAppliedFieldPath) {
		if entry.Manager != ServerSideFieldManager {
			owners = append(owners, entry)
		}
	}
	return owners
}

// applyRecord applies the record alone to obj, as kubectl-last-applied.
func (r *runner) applyRecord(ctx context.Context, client dynamic.ResourceInterface, obj *unstructured.Unstructured, record string) (*unstructured.Unstructured, error) {
	justRecord := &unstructured.Unstructured{}
	justRecord.SetGroupVersionKind(obj.GroupVersionKind())
	justRecord.SetName(obj.GetName())
	justRecord.SetNamespace(obj.GetNamespace())
	justRecord.SetAnnotations(map[string]string{lastapplied.Annotation: record})
	applied, err := r.sendApply(ctx, client, justRecord, lastAppliedFieldManager)
	if err != nil {
		return nil, fmt.Errorf("applying the last-applied record as %s: %w", lastAppliedFieldManager, err)
	}
	return applied, nil
}

// secretRecordWarning says when a Secret kept a record all the same (owned
// by another manager, kubectl-last-applied for one): the server wrote it in
// clear.
func secretRecordWarning(o *object, applied *unstructured.Unstructured) []string {
	if applied == nil {
		return nil
	}
	if _, has := applied.GetAnnotations()[lastapplied.Annotation]; !has {
		return nil
	}
	return []string{fmt.Sprintf("%s: the API server rewrote this Secret's last-applied record with its values in clear, as it does for every "+
		"server-side apply of the field manager %q to an object that keeps a record (here owned by %s); "+
		"with a WriteOptions.FieldManager of your own the object keeps no record at all", o.Ref(), ServerSideFieldManager, ownerNames(applied))}
}

func ownerNames(obj *unstructured.Unstructured) string {
	var names []string
	for _, op := range []metav1.ManagedFieldsOperationType{metav1.ManagedFieldsOperationApply, metav1.ManagedFieldsOperationUpdate} {
		for _, entry := range csaupgrade.FindFieldsOwners(obj.GetManagedFields(), op, lastAppliedFieldPath) {
			names = append(names, entry.Manager)
		}
	}
	return strings.Join(names, ", ")
}

// hasRecord: obj carries kubectl's last-applied record.
func hasRecord(obj *unstructured.Unstructured) bool {
	_, has := obj.GetAnnotations()[lastapplied.Annotation]
	return has
}
