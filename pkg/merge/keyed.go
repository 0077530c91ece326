package merge

import (
	"strings"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/schema"
)

// keyed is an element of a keyed list with its canonical key.
type keyed struct {
	key string
	m   map[string]any
}

// mergeKeyed merges a list whose elements are matched by key fields: the
// file's elements (each merged with the live and last-applied element of the
// same key) in the file's order, live-only elements kept unless last-applied
// had them, ordered as the server orders kubectl's patch.
func (m *merger) mergeKeyed(where *at, l, f, c []any, n *schema.Node) ([]any, error) {
	lists, err := keyedLists(where, n.Keys, l, f, c)
	if err != nil {
		return nil, err
	}
	if side, dup, found := firstDuplicate(lists); found {
		return m.mergeAmbiguous(where, lists, n, side, dup)
	}
	lk, fk, ck := lists[LastApplied], lists[File], lists[Live]
	lIdx, cIdx := index(lk), index(ck)
	right := make([]item, len(fk))
	for i, fe := range fk {
		v, err := m.mergeObject(where.key(n.Keys, fe.m), elemAt(lk, lIdx, fe.key), fe.m, elemAt(ck, cIdx, fe.key), n.Item())
		if err != nil {
			return nil, err
		}
		right[i] = item{key: fe.key, val: v}
	}
	return values(interleave(m.survivors(lk, fk, ck, right, cIdx))), nil
}

// survivors splits the live elements into those the file leaves alone and
// computes the positions the result is ordered by. Strategic merge patches
// delete the last-applied elements the file dropped before appending new
// ones, which shifts positions (see positionsAfterDelete); a merge patch
// sends the list whole, so plain live positions serve.
func (m *merger) survivors(lk, fk, ck []keyed, right []item, cIdx map[string]int) ([]item, []item, map[string]int) {
	inF, removed := keyedSet(fk), keyedSet(lk)
	var kept, left, added []item
	for _, ce := range ck {
		if inF[ce.key] || !removed[ce.key] {
			kept = append(kept, item{key: ce.key})
		}
		if !inF[ce.key] && !removed[ce.key] {
			left = append(left, item{key: ce.key, val: DeepCopy(ce.m)})
		}
	}
	if !m.strategic {
		return left, right, positions(kept)
	}
	for _, r := range right {
		if _, inC := cIdx[r.key]; !inC {
			added = append(added, r)
		}
	}
	return left, right, positionsAfterDelete(kept, added, len(ck)-len(kept))
}

// keyedLists keys the elements of the three lists, failing on an element
// that is not an object or lacks a key field.
func keyedLists(where *at, keys []string, l, f, c []any) (map[Side][]keyed, error) {
	out := make(map[Side][]keyed, 3)
	for side, list := range map[Side][]any{LastApplied: l, File: f, Live: c} {
		ks, err := keyedElems(side, where, keys, list)
		if err != nil {
			return nil, err
		}
		out[side] = ks
	}
	return out, nil
}

func keyedElems(side Side, where *at, keys []string, list []any) ([]keyed, error) {
	out := make([]keyed, len(list))
	for i, e := range list {
		em, ok := e.(map[string]any)
		if !ok {
			return nil, fieldError(side, where.index(i), ErrTypeMismatch, "%s in a list of objects", describe(e))
		}
		k, missing := elemKey(em, keys)
		if missing != "" {
			return nil, fieldError(side, where.index(i), ErrMissingMergeKey, "no %q", missing)
		}
		out[i] = keyed{key: k, m: em}
	}
	return out, nil
}

// elemKey joins the canonical values of the key fields; it returns the name
// of a key field that is absent, null or not a scalar.
func elemKey(e map[string]any, keys []string) (string, string) {
	parts := make([]string, len(keys))
	for i, k := range keys {
		s, ok := fieldpath.ScalarKey(e[k])
		if !ok {
			return "", k
		}
		parts[i] = s
	}
	return strings.Join(parts, "\x00"), ""
}

func index(ks []keyed) map[string]int {
	idx := make(map[string]int, len(ks))
	for i, k := range ks {
		if _, seen := idx[k.key]; !seen {
			idx[k.key] = i
		}
	}
	return idx
}

func keyedSet(ks []keyed) map[string]bool {
	s := make(map[string]bool, len(ks))
	for _, k := range ks {
		s[k.key] = true
	}
	return s
}

// elemAt returns the element with the key, or nil.
func elemAt(ks []keyed, idx map[string]int, key string) map[string]any {
	i, ok := idx[key]
	if !ok {
		return nil
	}
	return ks[i].m
}

// firstDuplicate finds a key that occurs twice in one of the lists, looking
// at the file, then live, then last-applied.
func firstDuplicate(lists map[Side][]keyed) (Side, keyed, bool) {
	for _, side := range []Side{File, Live, LastApplied} {
		seen := make(map[string]bool, len(lists[side]))
		for _, k := range lists[side] {
			if seen[k.key] {
				return side, k, true
			}
			seen[k.key] = true
		}
	}
	return File, keyed{}, false
}
