package ownership

import (
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	kpath "github.com/kapply/kapply/pkg/fieldpath"
)

// Ownership says which field managers own which fields of a live object, as
// its metadata.managedFields record them.
type Ownership struct {
	managers []managerFields
}

// managerFields is one managedFields entry: a manager and the fields it owns.
type managerFields struct {
	name   string
	fields *fieldpath.Set
}

// Owners reads the managedFields of live (nil: an object with no owners).
// Entries in a format other than FieldsV1 are skipped; a malformed FieldsV1
// is an error naming the manager.
func Owners(live *unstructured.Unstructured) (*Ownership, error) {
	o := &Ownership{}
	if live == nil {
		return o, nil
	}
	entries, err := managedFields(live)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.FieldsType != "FieldsV1" || e.FieldsV1 == nil {
			continue
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(e.FieldsV1.GetRawReader()); err != nil {
			return nil, fmt.Errorf("decoding the managed fields of %q: %w", e.Manager, err)
		}
		o.managers = append(o.managers, managerFields{name: managerName(e), fields: set})
	}
	return o, nil
}

// managedFields converts metadata.managedFields, reporting what
// Unstructured.GetManagedFields would silently drop.
func managedFields(live *unstructured.Unstructured) ([]metav1.ManagedFieldsEntry, error) {
	raw, _, err := unstructured.NestedSlice(live.Object, "metadata", "managedFields")
	if err != nil {
		return nil, fmt.Errorf("reading metadata.managedFields: %w", err)
	}
	entries := make([]metav1.ManagedFieldsEntry, len(raw))
	for i, item := range raw {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("reading metadata.managedFields[%d]: not an object", i)
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &entries[i]); err != nil {
			return nil, fmt.Errorf("reading metadata.managedFields[%d]: %w", i, err)
		}
	}
	return entries, nil
}

// managerName is the manager, with the subresource it wrote through.
func managerName(e metav1.ManagedFieldsEntry) string {
	if e.Subresource != "" {
		return fmt.Sprintf("%s (%s)", e.Manager, e.Subresource)
	}
	return e.Manager
}

// Of returns, sorted, the managers that own the field at p or anything
// under it. A keyed list element matches an entry whose key holds the same
// values for every key field p names (a merge key may be a subset of the
// server's list-map keys, e.g. containerPort of containerPort+protocol).
func (o *Ownership) Of(path kpath.Path) []string {
	p := SMDPath(path)
	seen := map[string]bool{}
	var names []string
	for _, m := range o.managers {
		if !seen[m.name] && ownsUnder(m.fields, p) {
			seen[m.name] = true
			names = append(names, m.name)
		}
	}
	sort.Strings(names)
	return names
}

// ownsUnder reports whether s holds p, a descendant of p, or an ancestor of
// p that has no children listed (an atomic value owned whole).
func ownsUnder(s *fieldpath.Set, p fieldpath.Path) bool {
	if len(p) == 0 {
		return !s.Empty()
	}
	// Iterate, not All: All of SMD v6.4 ignores an early stop.
	owned := false
	s.Children.Iterate(func(child fieldpath.PathElement) {
		if next, ok := s.Children.Get(child); ok && !owned && matches(p[0], child) {
			owned = ownsUnder(next, p[1:])
		}
	})
	s.Members.Iterate(func(member fieldpath.PathElement) {
		owned = owned || matches(p[0], member) && (len(p) == 1 || !hasChild(s, member))
	})
	return owned
}

func hasChild(s *fieldpath.Set, pe fieldpath.PathElement) bool {
	_, ok := s.Children.Get(pe)
	return ok
}

// matches compares path elements, a keyed one by the key fields want names.
func matches(want, have fieldpath.PathElement) bool {
	if want.Equals(have) {
		return true
	}
	if want.Key == nil || have.Key == nil {
		return false
	}
	for _, f := range *want.Key {
		v, ok := fieldValue(*have.Key, f.Name)
		if !ok || !value.Equals(v, f.Value) {
			return false
		}
	}
	return true
}

func fieldValue(fields value.FieldList, name string) (value.Value, bool) {
	for _, f := range fields {
		if f.Name == name {
			return f.Value, true
		}
	}
	return nil, false
}

// SMDPath converts a path to structured-merge-diff's, the form managedFields
// are read in: the one place kapply's paths meet SMD's.
func SMDPath(p kpath.Path) fieldpath.Path {
	out := make(fieldpath.Path, len(p))
	for i, e := range p {
		out[i] = toSMDElement(e)
	}
	return out
}

// SMDSet is the set of SMD paths of paths (see SMDPath), as client-go's
// csaupgrade takes fields.
func SMDSet(paths ...kpath.Path) *fieldpath.Set {
	set := fieldpath.NewSet()
	for _, p := range paths {
		set.Insert(SMDPath(p))
	}
	return set
}

func toSMDElement(e kpath.Element) fieldpath.PathElement {
	switch {
	case e.IsKey():
		fields := make([]value.Field, len(e.Keys))
		for i, kv := range e.Keys {
			fields[i] = value.Field{Name: kv.Name, Value: value.NewValueInterface(kv.Value)}
		}
		keys := value.FieldList(fields)
		keys.Sort()
		return fieldpath.PathElement{Key: &keys}
	case e.IsValue():
		return fieldpath.ValueElement(value.NewValueInterface(e.Value))
	case e.IsIndex():
		return fieldpath.IndexElement(e.Index)
	}
	return fieldpath.FieldNameElement(e.Field)
}
