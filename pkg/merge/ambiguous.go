package merge

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kapply/kapply/pkg/schema"
)

// mergeAmbiguous merges a keyed list in which one merge-key value occurs
// twice (in the file, live or last-applied), where a strategic merge patch
// would merge the duplicates into one element or delete both. The result:
//
//   - the file's elements, in the file's order; one takes the live-only
//     fields of a live element (and the deletions of a last-applied element)
//     only when its full identity (IdentityKeys, or Keys) is unique in the
//     file and matches exactly one element there;
//   - live elements whose merge key neither the file nor last-applied uses,
//     kept where live had them; a live element whose merge key the file uses
//     is replaced by the file's elements, so that server defaulting (a
//     container port's protocol) cannot make it a duplicate of one of them;
//   - duplicates placed next to each other, as the server's application of
//     `$patch: replace` orders them.
//
// The patch then replaces the list whole, guarded by resourceVersion.
func (m *merger) mergeAmbiguous(where *at, lists map[Side][]keyed, n *schema.Node, side Side, dup keyed) ([]any, error) {
	m.warn(where, fmt.Sprintf("duplicate merge key %s in the %s: strategic merge would lose or mangle elements, so the list is merged by whole-element identity and replaced whole", keyText(n.Keys, dup.m), side))
	ident := identityKeys(n)
	lUnique, fUnique, cUnique := uniqueBy(lists[LastApplied], ident), uniqueBy(lists[File], ident), uniqueBy(lists[Live], ident)
	right := make([]item, len(lists[File]))
	for i, fe := range lists[File] {
		id, missing := elemKey(fe.m, ident)
		var lx, cx map[string]any
		if _, unique := fUnique[id]; unique && missing == "" {
			lx, cx = lUnique[id], cUnique[id]
		}
		v, err := m.mergeObject(where.key(n.Keys, fe.m), lx, fe.m, cx, n.Item())
		if err != nil {
			return nil, err
		}
		right[i] = item{key: fe.key, val: v}
	}
	managed := keyedSet(append(slices.Clone(lists[File]), lists[LastApplied]...))
	var left, all []item
	for _, ce := range lists[Live] {
		all = append(all, item{key: ce.key})
		if !managed[ce.key] {
			left = append(left, item{key: ce.key, val: DeepCopy(ce.m)})
		}
	}
	return groupDuplicates(interleave(left, right, positions(all))), nil
}

// identityKeys are the fields that tell elements apart: the
// x-kubernetes-list-map-keys when wider than the merge key.
func identityKeys(n *schema.Node) []string {
	if len(n.IdentityKeys) > len(n.Keys) {
		return n.IdentityKeys
	}
	return n.Keys
}

// uniqueBy maps each identity that occurs exactly once to its element;
// elements lacking an identity field are left out.
func uniqueBy(ks []keyed, ident []string) map[string]map[string]any {
	count := make(map[string]int, len(ks))
	elem := make(map[string]map[string]any, len(ks))
	for _, k := range ks {
		id, missing := elemKey(k.m, ident)
		if missing != "" {
			continue
		}
		count[id]++
		elem[id] = k.m
	}
	for id, c := range count {
		if c > 1 {
			delete(elem, id)
		}
	}
	return elem
}

// groupDuplicates moves each duplicate next to the first element with its
// key, keeping everything else in place.
func groupDuplicates(items []item) []any {
	first := make(map[string]int, len(items))
	for i, it := range items {
		if _, seen := first[it.key]; !seen {
			first[it.key] = i
		}
	}
	slices.SortStableFunc(items, func(a, b item) int { return first[a.key] - first[b.key] })
	return values(items)
}

func keyText(keys []string, e map[string]any) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%v", k, e[k])
	}
	return strings.Join(parts, ",")
}
