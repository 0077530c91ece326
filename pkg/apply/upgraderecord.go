package apply

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/csaupgrade"
	smdpath "sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/ownership"
)

// upgradePatch is csaupgrade's JSON patch (testing live's resourceVersion
// first) that hands client-side apply's fields of live to manager, as
// kubectl apply --server-side does, but only the fields its record names
// (onlyRecordOwned); nil when there is nothing to hand over.
func (r *runner) upgradePatch(o *object, live *unstructured.Unstructured, manager string) ([]byte, error) {
	return csaupgrade.UpgradeManagedFieldsPatch(r.onlyRecordOwned(o, live), clientSideManagers(live), manager)
}

// onlyRecordOwned is live with client-side apply's managedFields entries
// owning only what its last-applied record names (ownership.OnlyRecord):
// a field released from the record by an older kapply, which left it in
// managedFields, then goes to no manager instead of to the server-side
// one, which would delete it at once. live itself when there is nothing to
// take out, no record, or a record that does not type against the kind's
// schema (then everything is handed over, as kubectl does).
func (r *runner) onlyRecordOwned(o *object, live *unstructured.Unstructured) *unstructured.Unstructured {
	clientSide := clientSideManagers(live)
	if !hasUpdateEntry(live, clientSide) || !lastapplied.HasRecord(live) {
		return live
	}
	record, ok := r.typedRecord(o, live)
	if !ok {
		return live
	}
	entries, changed, err := ownership.OnlyRecord(live.GetManagedFields(), clientSide, record)
	if err != nil || !changed {
		return live
	}
	out := live.DeepCopy()
	out.SetManagedFields(entries)
	return out
}

// typedRecord is the set of fields live's record names, typed with the
// kind's schema as the server types an apply of it (the deduced types for
// a custom kind without one, as the server's).
func (r *runner) typedRecord(o *object, live *unstructured.Unstructured) (*smdpath.Set, bool) {
	probe, err := recordProbe(live)
	if err != nil {
		return nil, false
	}
	converter, _, err := r.ssaConverter(o, live.GroupVersionKind())
	if err != nil {
		return nil, false
	}
	typed, err := converter.ObjectToTyped(probe)
	if err != nil {
		return nil, false
	}
	set, err := typed.ToFieldSet()
	if err != nil {
		return nil, false
	}
	return set, true
}

// hasUpdateEntry reports whether one of managers has an Update entry of
// live's main resource: client-side ownership to upgrade.
func hasUpdateEntry(live *unstructured.Unstructured, managers sets.Set[string]) bool {
	for _, e := range live.GetManagedFields() {
		if managers.Has(e.Manager) && e.Operation == metav1.ManagedFieldsOperationUpdate && e.Subresource == "" {
			return true
		}
	}
	return false
}
