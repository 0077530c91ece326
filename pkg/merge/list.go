package merge

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/schema"
)

// item is a list element with its canonical key (merge-key values for keyed
// lists, the value itself for sets).
type item struct {
	key string
	val any
}

// mergeList merges a list the file sets, by the list's strategy; lists of
// unknown schema are atomic, as in kubectl.
func (m *merger) mergeList(where *at, l, f, c []any, inC bool, n *schema.Node) ([]any, error) {
	switch listKind(n) {
	case schema.Set:
		return m.mergeSet(where, l, f, c)
	case schema.Map:
		return m.mergeKeyed(where, l, f, c, n)
	}
	return m.mergeAtomic(where, f, n)
}

// listKind is how a list merges; a keyed list without keys is atomic.
func listKind(n *schema.Node) schema.ListType {
	lt, keys := n.ListStrategy()
	if lt == schema.Map && len(keys) == 0 {
		return schema.Atomic
	}
	return lt
}

// mergeAtomic takes the file's list whole; elements are still checked
// against the schema and cleared of nulls, as for any value from the file.
func (m *merger) mergeAtomic(where *at, f []any, n *schema.Node) ([]any, error) {
	out := make([]any, len(f))
	for i, e := range f {
		if e == nil {
			continue
		}
		v, err := m.mergeValue(where.index(i), nil, e, nil, false, n.Item())
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// mergeSet merges a list of primitive values: the file's values in the
// file's order, live-only values kept unless last-applied had them.
// Duplicates in the file collapse to their first occurrence.
func (m *merger) mergeSet(where *at, l, f, c []any) ([]any, error) {
	fItems, err := setItems(File, where, f)
	if err != nil {
		return nil, err
	}
	cItems, err := setItems(Live, where, c)
	if err != nil {
		return nil, err
	}
	lItems, err := setItems(LastApplied, where, l)
	if err != nil {
		return nil, err
	}
	right := dedupe(fItems)
	inF := keySet(right)
	removed := keySet(lItems)
	if m.strategic && keepsLiveOrder(lItems, fItems, cItems, inF) {
		return DeepCopy(c).([]any), nil
	}
	var left []item
	for _, it := range cItems {
		if !inF[it.key] && !removed[it.key] {
			left = append(left, it)
		}
	}
	return values(interleave(left, right, positions(cItems))), nil
}

// setItems keys the values of a set list, which must be scalars.
func setItems(side Side, where *at, list []any) ([]item, error) {
	out := make([]item, len(list))
	for i, v := range list {
		k, ok := fieldpath.ScalarKey(v)
		if !ok {
			return nil, fieldError(side, where.index(i), ErrMalformed, "a set list holds scalars, not %s", describe(v))
		}
		out[i] = item{key: k, val: v}
	}
	return out, nil
}

func describe(v any) string {
	switch shapeOf(v) {
	case nullShape:
		return "null"
	case badShape:
		return "non-JSON data"
	}
	return shapeName(shapeOf(v))
}

func dedupe(items []item) []item {
	seen := make(map[string]bool, len(items))
	out := make([]item, 0, len(items))
	for _, it := range items {
		if !seen[it.key] {
			seen[it.key] = true
			out = append(out, it)
		}
	}
	return out
}

func keySet(items []item) map[string]bool {
	s := make(map[string]bool, len(items))
	for _, it := range items {
		s[it.key] = true
	}
	return s
}

// positions maps each key to the index of its first occurrence.
func positions(items []item) map[string]int {
	pos := make(map[string]int, len(items))
	for i, it := range items {
		if _, seen := pos[it.key]; !seen {
			pos[it.key] = i
		}
	}
	return pos
}

// keepsLiveOrder reports the case where kubectl sends nothing for a set list
// although the file orders it differently: it compares the file with live
// after sorting live in place (diffListsOfScalars), so a file listing live's
// values in sorted order, with nothing to delete, leaves live's order.
func keepsLiveOrder(l, f, c []item, inF map[string]bool) bool {
	if len(c) == 0 || len(f) != len(c) {
		return false
	}
	for _, it := range l {
		if !inF[it.key] {
			return false
		}
	}
	sorted := slices.Clone(c)
	slices.SortStableFunc(sorted, func(a, b item) int {
		return strings.Compare(fmt.Sprintf("%v", a.val), fmt.Sprintf("%v", b.val))
	})
	for i := range sorted {
		if sorted[i].key != f[i].key {
			return false
		}
	}
	return true
}
