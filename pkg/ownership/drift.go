package ownership

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kapply/kapply/pkg/fieldpath"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/schema"
	"github.com/kapply/kapply/pkg/secretmask"
	"github.com/kapply/kapply/pkg/shown"
)

// Drift is what happened to an applied object since its last apply.
type Drift struct {
	// Changed are the fields whose live value is not the last-applied one:
	// someone else wrote them since the last apply.
	Changed []ChangedField `json:"changed"`
	// Foreign are the fields the file sets that a manager other than the
	// appliers owns now (from managedFields).
	Foreign []OwnedField `json:"foreign"`
}

// ChangedField is one field of the record whose live value differs.
type ChangedField struct {
	Path        fieldpath.Path `json:"path"`
	LastApplied any            `json:"lastApplied"`
	// Live is absent (nil, LiveMissing) when someone removed the field.
	Live        any  `json:"live,omitempty"`
	LiveMissing bool `json:"liveMissing,omitempty"`
	// Managers own the field now, by managedFields.
	Managers []string `json:"managers,omitempty"`
}

// OwnedField is a field and the managers that own it.
type OwnedField struct {
	Path     fieldpath.Path `json:"path"`
	Managers []string       `json:"managers"`
}

// FindDrift compares live with its last-applied record, field by field
// under the kind's schema (lists matched by their merge keys), and finds
// the file's fields that other managers than appliers own. file may be nil.
// owners comes from Owners(live). k is the digest key of a Secret's
// namespace, which its record's digests are checked under (zero: only an
// older kapply's unkeyed digests can be).
func FindDrift(live, file *unstructured.Unstructured, kind *schema.Kind, owners *Ownership, appliers []string, k lastapplied.DigestKey) (*Drift, error) {
	record, err := lastapplied.Read(live)
	if err != nil {
		return nil, err
	}
	if record == nil {
		return nil, fmt.Errorf("%w: %s", lastapplied.ErrNoRecord, shown.Text(live.GetName()))
	}
	root := rootOf(kind)
	d := &Drift{Changed: []ChangedField{}, Foreign: []OwnedField{}}
	for _, l := range Leaves(record, root) {
		if shadowedByStringData(record, l) {
			continue
		}
		if c, drifted := compareLeaf(k, l, live.Object); drifted {
			c.Managers = owners.Of(l.Path)
			d.Changed = append(d.Changed, c)
		}
	}
	if file != nil {
		d.Foreign = foreignFields(Leaves(file.Object, root), owners, appliers)
	}
	return d, nil
}

func rootOf(kind *schema.Kind) *schema.Node {
	if kind == nil {
		return nil
	}
	return kind.Root
}

func compareLeaf(k lastapplied.DigestKey, l Leaf, live map[string]any) (ChangedField, bool) {
	c := ChangedField{Path: l.Path, LastApplied: l.Value}
	if isEmptyOrNil(l.Value) {
		// An empty map or list in the record manages no entry of it.
		return c, false
	}
	v, ok := liveValueOf(live, l)
	switch {
	case !ok:
		c.LiveMissing = true
		return c, true
	case lastapplied.SameAsRecorded(v, l.Value), matchesRedacted(k, live, l, v):
		return c, false
	}
	c.Live = v
	return c, true
}

// matchesRedacted reports whether the live value v of a Secret entry is
// the value whose digest a redacted record holds. v comes from
// liveValueOf: data.KEY as stored (base64), stringData.KEY already decoded.
func matchesRedacted(k lastapplied.DigestKey, live map[string]any, l Leaf, v any) bool {
	for _, field := range secretmask.Fields() {
		if key, ok := secretEntry(live, l, field); ok {
			return lastapplied.MatchesRedacted(k, l.Value, field, key, v)
		}
	}
	return false
}

func isEmptyOrNil(v any) bool {
	switch c := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(c) == 0
	case []any:
		return len(c) == 0
	}
	return false
}

// A Secret's stringData is write-only: the server stores each entry
// base64-encoded under data (over a data entry of the same key) and keeps
// no stringData. So a record's stringData.KEY is compared with the live
// data.KEY decoded, and a record's data.KEY that stringData.KEY overrides
// is not compared at all.

// secretEntry returns KEY when l is field.KEY of a Secret.
func secretEntry(obj map[string]any, l Leaf, field string) (string, bool) {
	if !secretmask.IsSecret(obj) || len(l.Path) != 2 || !l.Path[0].IsField() || l.Path[0].Field != field || !l.Path[1].IsField() {
		return "", false
	}
	return l.Path[1].Field, true
}

// shadowedByStringData reports a record's data.KEY that the record's
// stringData.KEY overrides.
func shadowedByStringData(record map[string]any, l Leaf) bool {
	key, ok := secretEntry(record, l, "data")
	if !ok {
		return false
	}
	plain, _ := record["stringData"].(map[string]any)
	_, shadowed := plain[key]
	return shadowed
}

// liveValueOf is the live value l is compared with: for a Secret's
// stringData.KEY, the live data.KEY decoded.
func liveValueOf(live map[string]any, l Leaf) (any, bool) {
	key, ok := secretEntry(live, l, "stringData")
	if !ok {
		v, err := l.Path.Lookup(live)
		return v, err == nil
	}
	return lastapplied.LiveStringData(live, key)
}

func foreignFields(leaves []Leaf, owners *Ownership, appliers []string) []OwnedField {
	out := []OwnedField{}
	for _, l := range leaves {
		var others []string
		for _, m := range owners.Of(l.Path) {
			if !isApplier(m, appliers) {
				others = append(others, m)
			}
		}
		if len(others) > 0 {
			out = append(out, OwnedField{Path: l.Path, Managers: others})
		}
	}
	return out
}

func isApplier(manager string, appliers []string) bool {
	for _, a := range appliers {
		if manager == a || strings.HasPrefix(manager, a+" (") {
			return true
		}
	}
	return false
}

// Leaf is one field of an object that is compared whole: a scalar, an
// atomic list, an empty map, an element of a set list.
type Leaf struct {
	Path fieldpath.Path
	// Name is Path printed.
	Name  string
	Value any
}

// identity are the fields that name an object rather than configure it.
var identity = map[string]bool{"apiVersion": true, "kind": true, "metadata.name": true, "metadata.namespace": true}

// Leaves returns the leaves of obj, sorted by name, walking lists by the
// schema's merge keys (a nil node: maps by field, lists whole).
func Leaves(obj map[string]any, root *schema.Node) []Leaf {
	var out []Leaf
	walk(obj, root, nil, func(l Leaf) {
		if l.Name = l.Path.String(); !identity[l.Name] {
			out = append(out, l)
		}
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func walk(v any, n *schema.Node, at fieldpath.Path, visit func(Leaf)) {
	switch c := v.(type) {
	case map[string]any:
		if len(c) == 0 {
			break
		}
		for k, item := range c {
			walk(item, n.Field(k), at.Child(fieldpath.Field(k)), visit)
		}
		return
	case []any:
		if walkList(c, n, at, visit) {
			return
		}
	}
	visit(Leaf{Path: at, Value: v})
}

// walkList walks the elements of a keyed or set list; an atomic list, or
// one whose elements lack keys, is a leaf (false).
func walkList(list []any, n *schema.Node, at fieldpath.Path, visit func(Leaf)) bool {
	strategy, keys := n.ListStrategy()
	switch {
	case len(list) == 0:
		return false
	case strategy == schema.Set:
		for _, item := range list {
			visit(Leaf{Path: at.Child(fieldpath.Value(item)), Value: item})
		}
		return true
	case strategy == schema.Map && len(keys) > 0 && allKeyed(list, keys):
		for _, item := range list {
			elem := item.(map[string]any)
			walk(elem, n.Item(), at.Child(fieldpath.KeyOf(elem, keys)), visit)
		}
		return true
	}
	return false
}

func allKeyed(list []any, keys []string) bool {
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return false
		}
		for _, k := range keys {
			if _, has := m[k]; !has {
				return false
			}
		}
	}
	return true
}
