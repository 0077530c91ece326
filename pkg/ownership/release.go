package ownership

import (
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	kpath "github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/lastapplied"
)

// Release returns the patch that removes the fields from live's last-applied
// record, so the next apply leaves them to whoever writes them imperatively
// (kubectl scale, an autoscaler) instead of deleting them when the file no
// longer sets them. Every path must name something in the record.
//
// The same write takes the fields (and what lies under them) out of the
// managedFields entries of writers, client-side apply's managers (Update
// entries of the main resource): left there, the CSA→SSA upgrade of the
// next server-side apply (client-go's csaupgrade) would hand them to the
// applier, which then deletes them when the file does not set them. So
// for the Apply entries of appliers (server-side apply's managers): an
// object applied server-side keeps its applier's ownership in that
// entry, and the next server-side apply without the field deletes it. No
// value of the object changes, and the patch carries live's
// resourceVersion: a change since live was read makes the server refuse
// the whole write.
func Release(live *unstructured.Unstructured, paths []kpath.Path, writers, appliers sets.Set[string]) ([]byte, error) {
	key, record, err := lastapplied.EditedRecord(live, func(record map[string]any) error {
		for _, p := range paths {
			if err := p.Remove(record); err != nil {
				return fmt.Errorf("releasing %s: %w (the last-applied record does not set it)", p, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	metadata := map[string]any{"annotations": map[string]any{key: string(record)}}
	if rv := live.GetResourceVersion(); rv != "" {
		metadata["resourceVersion"] = rv
	}
	fields := SMDSet(paths...)
	entries, changed, err := WithoutFields(live.GetManagedFields(), writers, fields)
	if err != nil {
		return nil, err
	}
	entries, applied, err := restrictEntries(entries, metav1.ManagedFieldsOperationApply, appliers, func(set *fieldpath.Set) *fieldpath.Set {
		return set.RecursiveDifference(fields)
	})
	if err != nil {
		return nil, err
	}
	changed = changed || applied
	if changed {
		raw, err := EntriesJSON(entries)
		if err != nil {
			return nil, fmt.Errorf("encoding managedFields: %w", err)
		}
		metadata["managedFields"] = raw
	}
	patch, err := json.Marshal(map[string]any{"metadata": metadata})
	if err != nil {
		return nil, fmt.Errorf("encoding the release patch: %w", err)
	}
	return patch, nil
}

// WithoutFields returns entries with fields, and every field under them,
// taken out of the Update entries (main resource) of managers; changed
// says whether any entry lost a field. An entry left owning nothing is
// dropped, as the server drops it.
func WithoutFields(entries []metav1.ManagedFieldsEntry, managers sets.Set[string], fields *fieldpath.Set) ([]metav1.ManagedFieldsEntry, bool, error) {
	return restrictEntries(entries, metav1.ManagedFieldsOperationUpdate, managers, func(set *fieldpath.Set) *fieldpath.Set {
		return set.RecursiveDifference(fields)
	})
}

// restrictEntries replaces the set of each op entry (main resource) of
// managers by keep of it; changed says whether any set shrank.
func restrictEntries(entries []metav1.ManagedFieldsEntry, op metav1.ManagedFieldsOperationType, managers sets.Set[string], keep func(*fieldpath.Set) *fieldpath.Set) ([]metav1.ManagedFieldsEntry, bool, error) {
	out := make([]metav1.ManagedFieldsEntry, 0, len(entries))
	changed := false
	for _, e := range entries {
		if e.Operation != op || e.Subresource != "" || !managers.Has(e.Manager) {
			out = append(out, e)
			continue
		}
		set, err := decodeEntry(e)
		if err != nil {
			return nil, false, err
		}
		kept := keep(set)
		if kept.Equals(set) {
			out = append(out, e)
			continue
		}
		changed = true
		if kept.Empty() {
			continue // the server keeps no entry that owns nothing
		}
		if e, err = withFields(e, kept); err != nil {
			return nil, false, err
		}
		out = append(out, e)
	}
	return out, changed, nil
}

// StillSet returns the paths the file still sets: the next apply would take
// them back from the imperative writer they were released to.
func StillSet(file *unstructured.Unstructured, paths []kpath.Path) []kpath.Path {
	var set []kpath.Path
	for _, p := range paths {
		if _, err := p.Lookup(file.Object); err == nil {
			set = append(set, p)
		}
	}
	return set
}
