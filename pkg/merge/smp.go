package merge

import (
	"slices"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/schema"
)

// Strategic merge patch directives.
const (
	directiveKey     = "$patch"
	retainKeysKey    = "$retainKeys"
	setOrderPrefix   = "$setElementOrder/"
	deleteFromPrefix = "$deleteFromPrimitiveList/"
)

// strategicPatch returns the strategic merge patch that turns live into
// merged, whether it replaces a list whole (then it must be guarded by
// resourceVersion), and the paths it replaces whole (see Result.Whole). It is
// the difference between the two objects, not a replay of kubectl's
// algorithm, so it carries only what changes.
func strategicPatch(live, merged map[string]any, root *schema.Node) (map[string]any, bool, []fieldpath.Path) {
	b := &smpBuilder{}
	return b.object(nil, live, merged, root), b.replaced, b.whole
}

type smpBuilder struct {
	replaced bool
	whole    []fieldpath.Path
}

// replacesWhole notes that the patch sets the value at a whole: what
// another writer put there after the plan was read would be dropped.
func (b *smpBuilder) replacesWhole(a *at) {
	b.whole = append(b.whole, a.path())
}

// object diffs two maps at a. Fields live has and merged lacks become
// null, or, for a retainKeys object, are cleared by listing the fields to
// keep (which clears whatever else is there by then: the map is replaced
// whole).
func (b *smpBuilder) object(a *at, c, m map[string]any, n *schema.Node) map[string]any {
	p := map[string]any{}
	retain := n != nil && n.RetainKeys
	for k, cv := range c {
		_, kept := m[k]
		switch {
		case !kept && retain:
			if _, listed := p[retainKeysKey]; !listed {
				b.replacesWhole(a)
			}
			p[retainKeysKey] = sortedKeyList(m)
		case !kept:
			p[k] = nil
			if isComposite(cv) {
				b.replacesWhole(a.field(k))
			}
		}
	}
	for k, mv := range m {
		cv, inC := c[k]
		if !inC {
			p[k] = mv
			b.wholeIn(a.field(k), mv, n.Field(k))
			continue
		}
		b.field(p, a.field(k), k, cv, mv, n.Field(k))
	}
	return p
}

// wholeIn notes what a value sent where live has none replaces whole if
// another writer puts something there first: the server merges its maps
// and keyed lists into what it finds, and replaces the rest.
func (b *smpBuilder) wholeIn(a *at, v any, n *schema.Node) {
	switch x := v.(type) {
	case map[string]any:
		if n != nil && (n.AtomicMap || opaque(n)) {
			b.replacesWhole(a)
			return
		}
		for k, e := range x {
			b.wholeIn(a.field(k), e, n.Field(k))
		}
	case []any:
		switch listKind(n) {
		case schema.Set:
		case schema.Map:
			for _, e := range x {
				if em, ok := e.(map[string]any); ok {
					b.wholeIn(a.key(n.Keys, em), em, n.Item())
				}
			}
		default:
			b.replacesWhole(a)
		}
	}
}

func (b *smpBuilder) field(p map[string]any, a *at, k string, cv, mv any, n *schema.Node) {
	cm, cIsMap := cv.(map[string]any)
	mm, mIsMap := mv.(map[string]any)
	cl, cIsList := cv.([]any)
	ml, mIsList := mv.([]any)
	switch {
	case cIsMap && mIsMap && n != nil && n.AtomicMap:
		if !fieldpath.Equal(cm, mm) {
			p[k] = mm // patch strategy replace: the server takes the map whole
			b.replacesWhole(a)
		}
	case cIsMap && mIsMap:
		before := len(b.whole)
		sub := b.object(a, cm, mm, n)
		switch {
		case len(sub) == 0:
		case opaque(n) && descends(cm, sub):
			b.replaced = true
			p[k] = replaceWhole(mm)
			b.whole = b.whole[:before] // the map is one whole now
			b.replacesWhole(a)
		default:
			p[k] = sub
		}
	case cIsList && mIsList:
		b.list(p, a, k, cl, ml, n)
	case !fieldpath.Equal(cv, mv):
		p[k] = mv
		if isComposite(cv) || isComposite(mv) {
			b.replacesWhole(a)
		}
	}
}

// opaque reports an object whose values the server's Go types cannot
// describe: a map of objects or lists (a CertificateSigningRequest's
// spec.extra, map[string][]string) or an object of unknown content (a
// RawExtension such as a ControllerRevision's data). The server's strategic
// merge looks up the Go field of every map or list value it merges into a
// live one, and fails on these ("data type is not struct", "unable to find
// api field"). A node we know nothing about (nil) is not opaque: the server
// may well know it.
func opaque(n *schema.Node) bool {
	if n == nil {
		return false
	}
	switch n.Type {
	case schema.Unknown:
		return true
	case schema.Object:
		return len(n.Fields) == 0 && n.Elem.TypeOf() != schema.Scalar
	}
	return false
}

// descends reports whether a patch of the live map c merges a map or list
// into a live map or list, which makes the server look up its Go field.
func descends(c, patch map[string]any) bool {
	for k, pv := range patch {
		switch pv.(type) {
		case map[string]any:
			if _, ok := c[k].(map[string]any); ok {
				return true
			}
		case []any:
			if _, ok := c[k].([]any); ok {
				return true
			}
		}
	}
	return false
}

// replaceWhole sends a map as `$patch: replace`, which the server applies
// without looking into it: the merged map, whole.
func replaceWhole(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	out[directiveKey] = "replace"
	return out
}

// list diffs a list by its strategy; atomic lists are sent whole.
func (b *smpBuilder) list(p map[string]any, a *at, k string, cl, ml []any, n *schema.Node) {
	if fieldpath.Equal(cl, ml) {
		return
	}
	switch listKind(n) {
	case schema.Set:
		setListPatch(p, k, cl, ml)
	case schema.Map:
		b.keyedList(p, a, k, cl, ml, n)
	default:
		p[k] = ml
		b.replacesWhole(a)
	}
}

// setListPatch adds and deletes primitive values and sets the merged order.
func setListPatch(p map[string]any, k string, cl, ml []any) {
	cItems, mItems := scalarItems(cl), scalarItems(ml)
	inC, inM := keySet(cItems), keySet(mItems)
	var adds, dels []any
	for _, it := range mItems {
		if !inC[it.key] {
			adds = append(adds, it.val)
		}
	}
	for _, it := range dedupe(cItems) {
		if !inM[it.key] {
			dels = append(dels, it.val)
		}
	}
	setIfAny(p, k, adds)
	setIfAny(p, deleteFromPrefix+k, dels)
	setIfAny(p, setOrderPrefix+k, ml)
}

// keyedList patches changed elements, adds new ones, deletes dropped ones
// and sets the order to the merged order. The order list names every merged
// element, so the server places none by its own live order. A list with a
// duplicate key, live or merged, cannot be patched element-wise: it is
// replaced whole. A deleted element goes whole, with whatever another
// writer added to it.
func (b *smpBuilder) keyedList(p map[string]any, a *at, k string, cl, ml []any, n *schema.Node) {
	ck, cOK := keyedOrNil(cl, n.Keys)
	mk, mOK := keyedOrNil(ml, n.Keys)
	if !cOK || !mOK || hasDuplicate(ck) || hasDuplicate(mk) {
		b.replaced = true
		p[k] = append(slices.Clone(ml), map[string]any{directiveKey: "replace"})
		b.replacesWhole(a)
		return
	}
	cIdx, inM := index(ck), keyedSet(mk)
	var items []any
	order := make([]any, len(mk))
	for i, me := range mk {
		order[i] = keyFields(me.m, n.Keys)
		if ci, inC := cIdx[me.key]; !inC {
			items = append(items, me.m)
			b.wholeIn(a.key(n.Keys, me.m), me.m, n.Item())
		} else if sub := b.object(a.key(n.Keys, me.m), ck[ci].m, me.m, n.Item()); len(sub) > 0 {
			items = append(items, withKeys(sub, me.m, n.Keys))
		}
	}
	for _, ce := range ck {
		if !inM[ce.key] {
			items = append(items, withKeys(map[string]any{directiveKey: "delete"}, ce.m, n.Keys))
			b.replacesWhole(a.key(n.Keys, ce.m))
		}
	}
	setIfAny(p, k, items)
	setIfAny(p, setOrderPrefix+k, order)
}

// keyedOrNil keys a list; ok is false when an element is not keyable.
func keyedOrNil(list []any, keys []string) ([]keyed, bool) {
	ks, err := keyedElems(Live, nil, keys, list)
	return ks, err == nil
}

func hasDuplicate(ks []keyed) bool {
	return len(index(ks)) != len(ks)
}

func keyFields(e map[string]any, keys []string) map[string]any {
	return withKeys(make(map[string]any, len(keys)), e, keys)
}

func withKeys(dst, src map[string]any, keys []string) map[string]any {
	for _, k := range keys {
		dst[k] = src[k]
	}
	return dst
}

// scalarItems keys primitive values; merged and live sets were checked.
func scalarItems(list []any) []item {
	out := make([]item, 0, len(list))
	for _, v := range list {
		if k, ok := fieldpath.ScalarKey(v); ok {
			out = append(out, item{key: k, val: v})
		}
	}
	return out
}

func setIfAny(p map[string]any, k string, list []any) {
	if len(list) > 0 {
		p[k] = list
	}
}

func sortedKeyList(m map[string]any) []any {
	keys := sortedKeys(m)
	out := make([]any, len(keys))
	for i, k := range keys {
		out[i] = k
	}
	return out
}
