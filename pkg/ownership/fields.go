package ownership

import (
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	kpath "github.com/kapply/kapply/pkg/fieldpath"
)

// FieldsOf are the leaf fields manager owns, as kapply's paths (keyed
// elements by their key values). manager matches an entry's manager with
// or without its subresource ("hpa" matches "hpa (scale)"), so a rule
// naming a controller silences what it wrote through any subresource.
func (o *Ownership) FieldsOf(manager string) []kpath.Path {
	var out []kpath.Path
	for _, m := range o.managers {
		if m.name != manager && !hasSubresourceOf(m.name, manager) {
			continue
		}
		m.fields.Leaves().Iterate(func(p fieldpath.Path) {
			out = append(out, fromSMDPath(p))
		})
	}
	return out
}

func hasSubresourceOf(name, manager string) bool {
	return len(name) > len(manager)+2 && name[:len(manager)+2] == manager+" ("
}

// fromSMDPath is SMDPath's inverse.
func fromSMDPath(p fieldpath.Path) kpath.Path {
	out := make(kpath.Path, len(p))
	for i, e := range p {
		switch {
		case e.FieldName != nil:
			out[i] = kpath.Field(*e.FieldName)
		case e.Key != nil:
			kvs := make([]kpath.KeyValue, len(*e.Key))
			for j, f := range *e.Key {
				kvs[j] = kpath.KeyValue{Name: f.Name, Value: f.Value.Unstructured()}
			}
			out[i] = kpath.Key(kvs)
		case e.Value != nil:
			out[i] = kpath.Value((*e.Value).Unstructured())
		case e.Index != nil:
			out[i] = kpath.Index(*e.Index)
		}
	}
	return out
}
