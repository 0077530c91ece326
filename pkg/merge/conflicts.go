package merge

import (
	"slices"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/schema"
)

// SameFunc tells whether the value recorded at path in the last-applied
// configuration is the live one; nil means fieldpath.Equal. A caller whose
// records hold digests in place of values (redacted Secrets, compact
// records) compares through them.
type SameFunc func(path fieldpath.Path, recorded, live any) bool

// Conflicts lists the fields the plan (of file against live, under kind's
// schema) changes that someone else changed since the last apply: live no
// longer holds what lastApplied recorded there (another value, or present
// on one side only). This is the rule of kubectl apply --overwrite=false
// (apimachinery's CreateThreeWayMergePatch with overwrite false: the patch
// against the changes from original to current), applied field by field:
// where apimachinery compares oddly (the elements of an atomic list of
// objects key by key, lists of strings merged never, a list removed live
// against the file's new elements) the values are compared. Without a
// record (lastApplied nil) every live field the plan changes counts as
// changed by someone else, as in kubectl.
func (p *Result) Conflicts(kind *schema.Kind, lastApplied, file, live map[string]any, same SameFunc) []fieldpath.Path {
	if same == nil {
		same = func(_ fieldpath.Path, recorded, live any) bool { return fieldpath.Equal(recorded, live) }
	}
	root, _ := kindRoot(kind)
	var out []fieldpath.Path
	for _, ch := range p.Changes {
		path, ok := patchedPath(ch, root, file)
		if !ok || slices.ContainsFunc(out, path.Equals) {
			continue
		}
		recorded, lErr := path.Lookup(lastApplied)
		current, cErr := path.Lookup(live)
		inL, inC := lErr == nil, cErr == nil
		if inL != inC || (inC && !same(path, recorded, current)) {
			out = append(out, path)
		}
	}
	return out
}

// patchedPath is where the patch changes what ch reports, as apimachinery
// compares it: the field itself, or for a field cleared because the file
// sets an enclosing object to null, that object. Fields kept, fields
// cleared by an object the file sets whole (retainKeys, an atomic map: the
// patch names the fields it keeps, not those it clears) and the order of a
// merged list (a directive, not a value) are not compared.
func patchedPath(ch Change, root *schema.Node, file map[string]any) (fieldpath.Path, bool) {
	switch ch.Reason {
	case KeptUnmanaged:
		return nil, false
	case ClearedWithParent:
		for i := 1; i < len(ch.Path); i++ {
			if v, err := ch.Path[:i].Lookup(file); err == nil && v == nil {
				return ch.Path[:i], true
			}
		}
		return nil, false
	}
	_, oldList := ch.Old.([]any)
	_, newList := ch.New.([]any)
	if lt := listKind(nodeAt(root, ch.Path)); oldList && newList && (lt == schema.Map || lt == schema.Set) {
		return nil, false // a reorder; element changes come on their own
	}
	return ch.Path, true
}

// nodeAt is the schema of the field at path, nil where none is known.
func nodeAt(root *schema.Node, path fieldpath.Path) *schema.Node {
	n := root
	for _, e := range path {
		if e.IsField() {
			n = n.Field(e.Field)
		} else {
			n = n.Item()
		}
	}
	return n
}
