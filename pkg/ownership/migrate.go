package ownership

import (
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/csaupgrade"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapply/kapply/pkg/lastapplied"
)

// Migration between client-side and server-side apply (kubernetes#99003):
// kubectl apply --server-side hands client-side apply's fields to the
// server-side manager (client-go's csaupgrade), but fields of the file that
// another Update manager also wrote — kubectl create's, the server's
// before-first-apply, a tool's own name — stay with it, so a field the file
// drops later survives every server-side apply. ToServerSide hands those
// too, but only the ones the last-applied record names: what such a manager
// wrote beyond the file stays its own.

// ImperativeManagers are the Update managers whose fields the record names
// go to the server-side manager by default: the server's name for the
// fields an object had before its first apply, and kubectl create's.
var ImperativeManagers = []string{"before-first-apply", "kubectl-create"}

// ServerSideMigration says how ToServerSide moves fields.
type ServerSideMigration struct {
	// Record is the set of fields the last-applied record names, typed as
	// the server types them (keyed list elements, sets).
	Record *fieldpath.Set
	// ClientSide are the managers of client-side apply: their fields go
	// over as csaupgrade moves them and kubectl does, but only those Record
	// names (see OnlyRecord); a nil Record moves them all.
	ClientSide sets.Set[string]
	// Imperative are the managers whose fields in Record go over.
	Imperative sets.Set[string]
	// Take are fields taken from any other manager (--force-conflicts).
	Take *fieldpath.Set
	// To is the server-side manager.
	To string
	// DropRecord takes the last-applied annotations out of every manager's
	// fields (the object loses its record in the same write).
	DropRecord bool
	// APIVersion and Time are those of a new entry of To, when it had none.
	APIVersion string
	Time       metav1.Time
}

// recordAnnotations are the fields of the last-applied record, kubectl's and
// kapply's compact one.
var recordAnnotations = func() *fieldpath.Set {
	set := fieldpath.NewSet()
	for _, key := range []string{lastapplied.Annotation, lastapplied.CompactAnnotation} {
		set.Insert(fieldpath.MakePathOrDie("metadata", "annotations", key))
	}
	return set
}()

// ToServerSide returns entries with the fields of m moved to the Apply
// entry of m.To: m.Take from any manager, m.Record from the imperative ones
// (not through a subresource) and from the client-side ones, whose other
// fields are left to no manager (OnlyRecord).
func ToServerSide(entries []metav1.ManagedFieldsEntry, m ServerSideMigration) ([]metav1.ManagedFieldsEntry, error) {
	if m.Record != nil {
		var err error
		if entries, _, err = OnlyRecord(entries, m.ClientSide, m.Record); err != nil {
			return nil, err
		}
	}
	taken := fieldpath.NewSet()
	var kept []metav1.ManagedFieldsEntry
	for _, e := range entries {
		set, err := decodeEntry(e)
		if err != nil {
			return nil, err
		}
		if e.Operation == metav1.ManagedFieldsOperationUpdate && !m.ClientSide.Has(e.Manager) || e.Operation == metav1.ManagedFieldsOperationApply && e.Manager != m.To {
			move := set.Intersection(orEmpty(m.Take))
			if m.Imperative.Has(e.Manager) && e.Subresource == "" {
				move = move.Union(set.Intersection(orEmpty(m.Record)))
			}
			taken = taken.Union(move)
			if e, err = withFields(e, set.Difference(move)); err != nil {
				return nil, err
			}
		}
		kept = append(kept, e)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	obj.SetManagedFields(dropEmpty(kept))
	if err := csaupgrade.UpgradeManagedFields(obj, m.ClientSide, m.To); err != nil {
		return nil, fmt.Errorf("upgrading client-side field ownership: %w", err)
	}
	out, err := unionInto(obj.GetManagedFields(), m, taken)
	if err != nil || !m.DropRecord {
		return out, err
	}
	return withoutFields(out, recordAnnotations)
}

// unionInto adds fields to the Apply entry of m.To, made when missing.
func unionInto(entries []metav1.ManagedFieldsEntry, m ServerSideMigration, fields *fieldpath.Set) ([]metav1.ManagedFieldsEntry, error) {
	if fields.Empty() {
		return entries, nil
	}
	return addFields(entries, metav1.ManagedFieldsEntry{Manager: m.To, Operation: metav1.ManagedFieldsOperationApply,
		APIVersion: m.APIVersion, Time: &m.Time, FieldsType: "FieldsV1"}, fields)
}

// addFields adds fields to the entry of entries with fresh's manager and
// operation (no subresource), or appends fresh owning them.
func addFields(entries []metav1.ManagedFieldsEntry, fresh metav1.ManagedFieldsEntry, fields *fieldpath.Set) ([]metav1.ManagedFieldsEntry, error) {
	for i, e := range entries {
		if e.Manager == fresh.Manager && e.Operation == fresh.Operation && e.Subresource == "" {
			set, err := decodeEntry(e)
			if err != nil {
				return nil, err
			}
			entries[i], err = withFields(e, set.Union(fields))
			return entries, err
		}
	}
	e, err := withFields(fresh, fields)
	return append(entries, e), err
}

// ToClientSide returns entries with the Apply entry of from (the
// server-side manager) handed to the Update entry of to (the client-side
// one), and the fields it held: the fields a new last-applied record names
// (RecordOf), so that client-side apply deletes what the file drops.
func ToClientSide(entries []metav1.ManagedFieldsEntry, from, to string) ([]metav1.ManagedFieldsEntry, *fieldpath.Set, error) {
	owned := fieldpath.NewSet()
	var out []metav1.ManagedFieldsEntry
	for _, e := range entries {
		if e.Manager == from && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == "" {
			set, err := decodeEntry(e)
			if err != nil {
				return nil, nil, err
			}
			owned = owned.Union(set)
			continue
		}
		out = append(out, e)
	}
	if owned.Empty() {
		return entries, owned, nil
	}
	out, err := addFields(out, metav1.ManagedFieldsEntry{Manager: to, Operation: metav1.ManagedFieldsOperationUpdate,
		APIVersion: apiVersionOf(entries, from), Time: timeOf(entries, from), FieldsType: "FieldsV1"}, owned)
	return out, owned, err
}

// Diff returns, per manager (Manager (subresource)), the fields it owns in
// before and no longer in after: what a migration or a forced apply takes
// from it.
func Diff(before, after []metav1.ManagedFieldsEntry) (map[string]*fieldpath.Set, error) {
	byName := func(entries []metav1.ManagedFieldsEntry) (map[string]*fieldpath.Set, error) {
		out := map[string]*fieldpath.Set{}
		for _, e := range entries {
			set, err := decodeEntry(e)
			if err != nil {
				return nil, err
			}
			out[managerName(e)] = orEmpty(out[managerName(e)]).Union(set)
		}
		return out, nil
	}
	b, err := byName(before)
	if err != nil {
		return nil, err
	}
	a, err := byName(after)
	if err != nil {
		return nil, err
	}
	lost := map[string]*fieldpath.Set{}
	for name, set := range b {
		if gone := set.Difference(orEmpty(a[name])).Leaves(); !gone.Empty() {
			lost[name] = gone
		}
	}
	return lost, nil
}

// Shared returns, per manager other than except, the fields of want it owns
// in entries.
func Shared(entries []metav1.ManagedFieldsEntry, want *fieldpath.Set, except sets.Set[string]) (map[string]*fieldpath.Set, error) {
	out := map[string]*fieldpath.Set{}
	for _, e := range entries {
		if except.Has(e.Manager) {
			continue
		}
		set, err := decodeEntry(e)
		if err != nil {
			return nil, err
		}
		if both := set.Intersection(want).Leaves(); !both.Empty() {
			out[managerName(e)] = orEmpty(out[managerName(e)]).Union(both)
		}
	}
	return out, nil
}

// EntrySet is the fields of manager's entry of operation (no subresource).
func EntrySet(entries []metav1.ManagedFieldsEntry, manager string, op metav1.ManagedFieldsOperationType) (*fieldpath.Set, error) {
	for _, e := range entries {
		if e.Manager == manager && e.Operation == op && e.Subresource == "" {
			return decodeEntry(e)
		}
	}
	return fieldpath.NewSet(), nil
}

func withoutFields(entries []metav1.ManagedFieldsEntry, fields *fieldpath.Set) ([]metav1.ManagedFieldsEntry, error) {
	out := make([]metav1.ManagedFieldsEntry, 0, len(entries))
	for _, e := range entries {
		set, err := decodeEntry(e)
		if err != nil {
			return nil, err
		}
		if e, err = withFields(e, set.Difference(fields)); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return dropEmpty(out), nil
}

func decodeEntry(e metav1.ManagedFieldsEntry) (*fieldpath.Set, error) {
	set := fieldpath.NewSet()
	if e.FieldsV1 == nil {
		return set, nil
	}
	if err := set.FromJSON(e.FieldsV1.GetRawReader()); err != nil {
		return nil, fmt.Errorf("decoding the managed fields of %q: %w", e.Manager, err)
	}
	return set, nil
}

// withFields is e owning set; an empty set leaves FieldsV1 nil (dropEmpty).
func withFields(e metav1.ManagedFieldsEntry, set *fieldpath.Set) (metav1.ManagedFieldsEntry, error) {
	if set.Empty() {
		e.FieldsV1 = nil
		return e, nil
	}
	raw, err := set.ToJSON()
	if err != nil {
		return e, fmt.Errorf("encoding the managed fields of %q: %w", e.Manager, err)
	}
	e.FieldsV1 = &metav1.FieldsV1{Raw: raw}
	return e, nil
}

// dropEmpty leaves out entries that own nothing: the server keeps none.
func dropEmpty(entries []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
	var out []metav1.ManagedFieldsEntry
	for _, e := range entries {
		if e.FieldsV1 != nil && len(e.FieldsV1.Raw) > 0 && string(e.FieldsV1.Raw) != "{}" {
			out = append(out, e)
		}
	}
	return out
}

func orEmpty(s *fieldpath.Set) *fieldpath.Set {
	if s == nil {
		return fieldpath.NewSet()
	}
	return s
}

func apiVersionOf(entries []metav1.ManagedFieldsEntry, manager string) string {
	for _, e := range entries {
		if e.Manager == manager {
			return e.APIVersion
		}
	}
	return ""
}

func timeOf(entries []metav1.ManagedFieldsEntry, manager string) *metav1.Time {
	for _, e := range entries {
		if e.Manager == manager {
			return e.Time
		}
	}
	return nil
}

// EntriesJSON is entries as metadata.managedFields holds them, for a patch.
func EntriesJSON(entries []metav1.ManagedFieldsEntry) (json.RawMessage, error) {
	if entries == nil {
		entries = []metav1.ManagedFieldsEntry{}
	}
	return json.Marshal(entries)
}
