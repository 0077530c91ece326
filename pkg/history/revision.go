package history

import (
	"fmt"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/secretmask"
)

// Revision is one apply of an ApplySet that changed its configuration.
type Revision struct {
	Number       int
	Time         time.Time
	FieldManager string
	// User is who applied: the server's answer to a SelfSubjectReview, else
	// the kubeconfig's user.
	User        string
	ChangeCause string
	Counts      Counts
	// Complete is set once every member was written and the parent
	// recorded the set; an interrupted or failed apply leaves it unset.
	Complete bool
	// Members are the configurations sent (Scrub'bed), sorted by MemberID;
	// nil when only the revision's metadata was read.
	Members []map[string]any
	// Unreadable, when set, is why the revision's objects cannot be read
	// (edited or damaged by hand): it is listed with its number and the
	// reason, never compared with nor rolled back to, and expires as the
	// others do. One such revision does not stop the others.
	Unreadable error
}

// Counts compare a revision's members with the revision before it.
type Counts struct {
	Members int `json:"members"`
	Added   int `json:"added"`
	Changed int `json:"changed"`
	Removed int `json:"removed"`
}

func (c Counts) String() string {
	return fmt.Sprintf("%d members (+%d ~%d -%d)", c.Members, c.Added, c.Changed, c.Removed)
}

// Removed is what a Secret's value is stored as: no value, and no digest
// of one (a digest of a short value is guessed offline).
const Removed = secretmask.Mask

// Scrub returns a copy of obj fit to be stored: a v1 Secret's values are
// replaced by Removed (their keys kept), and its last-applied records,
// which may hold them, are dropped.
func Scrub(obj map[string]any) map[string]any {
	out := unstructured.Unstructured{Object: obj}
	out = *out.DeepCopy()
	if !secretmask.IsSecret(obj) {
		return out.Object
	}
	for _, field := range secretmask.Fields() {
		values, ok := out.Object[field].(map[string]any)
		if !ok {
			delete(out.Object, field) // not a map: nothing of it is kept
			continue
		}
		for k := range values {
			values[k] = Removed
		}
	}
	// Both records, kubectl's and kapply's compact one: either holds the
	// values when kubectl or --secret-record=plain wrote it.
	annotations := out.GetAnnotations()
	if annotations != nil {
		for _, record := range fieldpath.RecordAnnotations {
			delete(annotations, record)
		}
		out.SetAnnotations(annotations)
	}
	return out.Object
}

// MemberID names a member: apiVersion's group, kind, namespace and name.
func MemberID(obj map[string]any) string {
	u := unstructured.Unstructured{Object: obj}
	gvk := u.GroupVersionKind()
	return fmt.Sprintf("%s/%s %s/%s", gvk.Group, gvk.Kind, u.GetNamespace(), u.GetName())
}

// NewMembers scrubs and sorts the configurations of a revision.
func NewMembers(objs []*unstructured.Unstructured) []map[string]any {
	members := make([]map[string]any, 0, len(objs))
	for _, o := range objs {
		members = append(members, Scrub(o.Object))
	}
	sort.SliceStable(members, func(i, j int) bool { return MemberID(members[i]) < MemberID(members[j]) })
	return members
}

// Compare counts what members added, changed and removed against before
// (nil: no revision before).
func Compare(before, members []map[string]any) Counts {
	c := Counts{Members: len(members)}
	old := indexByID(before)
	seen := map[string]bool{}
	for _, m := range members {
		id := MemberID(m)
		seen[id] = true
		prev, ok := old[id]
		switch {
		case !ok:
			c.Added++
		case !fieldpath.Equal(prev, m):
			c.Changed++
		}
	}
	for id := range old {
		if !seen[id] {
			c.Removed++
		}
	}
	return c
}

// Same reports whether two revisions' members are the same configurations.
func Same(before, members []map[string]any) bool {
	c := Compare(before, members)
	return c.Added == 0 && c.Changed == 0 && c.Removed == 0
}

func indexByID(members []map[string]any) map[string]map[string]any {
	index := make(map[string]map[string]any, len(members))
	for _, m := range members {
		index[MemberID(m)] = m
	}
	return index
}
