package ownership

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// OnlyRecord returns entries with the Update entries (main resource) of
// clientSide, client-side apply's managers, owning only the fields record
// names (typed as the server types them), the record's own annotations,
// and the maps and list elements that hold them. changed says whether any
// entry lost a field.
//
// It runs before client-side ownership is upgraded to a server-side
// manager (csaupgrade hands over everything such an entry owns). What
// client-side apply owns beyond its record is not the file's: a field an
// older kapply released from the record but left in managedFields, a
// default the server set when client-side apply created its parent. Handed
// to the server-side manager, the next server-side apply of a file that
// does not set it would delete it — a released spec.replicas becomes 1.
// Owned by nobody, it stays, as client-side apply would have kept it (it
// deletes only what the record names and the file does not).
func OnlyRecord(entries []metav1.ManagedFieldsEntry, clientSide sets.Set[string], record *fieldpath.Set) ([]metav1.ManagedFieldsEntry, bool, error) {
	if record == nil {
		return entries, false, nil
	}
	keep := record.Union(recordAnnotations)
	keep = keep.Union(ancestors(keep))
	return restrictEntries(entries, metav1.ManagedFieldsOperationUpdate, clientSide, func(set *fieldpath.Set) *fieldpath.Set {
		return set.Intersection(keep)
	})
}

// ancestors is every proper prefix of the paths of set: the maps and list
// elements an Update entry owns as members ("."), which a typed set of
// the record leaves out.
func ancestors(set *fieldpath.Set) *fieldpath.Set {
	out := fieldpath.NewSet()
	set.Iterate(func(p fieldpath.Path) {
		for i := 1; i < len(p); i++ {
			out.Insert(p[:i].Copy())
		}
	})
	return out
}
