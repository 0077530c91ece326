package fieldpath

import "slices"

// Written says when the API server writes a bookkeeping field of metadata.
type Written int

const (
	// EveryWrite: each write changes it (a diff of two writes shows it).
	EveryWrite Written = 1 << iota
	// OnCreate: set once, when the object is created.
	OnCreate
	// OnDelete: set when the object is being deleted (selfLink, long
	// gone from servers, is listed here: an old object may still hold it).
	OnDelete
)

// serverMetadata is the one list of the metadata fields the API server
// sets and a configuration file never declares. diff hides those of every
// write, comparisons of live with a result also skip those of creation,
// and export drops them all.
var serverMetadata = []serverField{
	{"managedFields", EveryWrite},
	{"resourceVersion", EveryWrite},
	{"generation", EveryWrite},
	{"uid", OnCreate},
	{"creationTimestamp", OnCreate},
	{"selfLink", OnDelete},
	{"deletionTimestamp", OnDelete},
	{"deletionGracePeriodSeconds", OnDelete},
}

// RecordAnnotations are the last-applied records (kubectl's and kapply's
// compact one), which every apply rewrites. pkg/lastapplied names them
// too; its tests check the two agree (it imports this package, not the
// other way round).
var RecordAnnotations = []string{
	"kubectl.kubernetes.io/last-applied-configuration",
	"kapply.dev/last-applied-compact",
}

// ServerMetadata returns the metadata fields the server writes at any of
// the moments in when (EveryWrite|OnCreate), in the list's order.
func ServerMetadata(when Written) []string {
	var out []string
	for _, f := range serverMetadata {
		if f.written&when != 0 {
			out = append(out, f.name)
		}
	}
	return out
}

// IsBookkeeping reports whether p is, or is under, a metadata field the
// server writes at a moment in when, or a last-applied record annotation.
func IsBookkeeping(p Path, when Written) bool {
	if len(p) < 2 || !p[0].IsField() || p[0].Field != "metadata" || !p[1].IsField() {
		return false
	}
	if len(p) >= 3 && p[1].Field == "annotations" && p[2].IsField() {
		return slices.Contains(RecordAnnotations, p[2].Field)
	}
	return slices.ContainsFunc(serverMetadata, func(f serverField) bool {
		return f.name == p[1].Field && f.written&when != 0
	})
}

type serverField struct {
	name    string
	written Written
}
