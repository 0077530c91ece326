package merge

// interleave orders a merged list: right holds the file's elements in the
// file's order, left the surviving live-only elements in live order, and pos
// the position of elements in the live list. It reproduces how the server
// applies kubectl's $setElementOrder (strategicpatch's mergeSortedSlice): a
// live-only element goes before the next file element only when both have a
// live position and the live-only one comes first; a file element without a
// position goes as soon as it is reached.
func interleave(left, right []item, pos map[string]int) []item {
	out := make([]item, 0, len(left)+len(right))
	i, j := 0, 0
	for i < len(left) || j < len(right) {
		if j == len(right) || (i < len(left) && comesFirst(left[i], right[j], pos)) {
			out = append(out, left[i])
			i++
			continue
		}
		out = append(out, right[j])
		j++
	}
	return out
}

// values returns the elements' values.
func values(items []item) []any {
	out := make([]any, len(items))
	for i, it := range items {
		out[i] = it.val
	}
	return out
}

func comesFirst(l, r item, pos map[string]int) bool {
	lp, lok := pos[l.key]
	rp, rok := pos[r.key]
	return lok && rok && lp < rp
}

// positionsAfterDelete returns the element positions the server orders a
// keyed list by after a strategic merge patch deletes d elements from it.
// The server deletes in place (append(s[:i], s[i+1:]...)) and then appends
// new elements to the shortened slice, which writes them into the tail of
// the live list it later reads positions from: the first d new elements, in
// file order, thus get positions after every surviving live element, and a
// live-only element then goes before them.
func positionsAfterDelete(survivors []item, added []item, d int) map[string]int {
	pos := positions(survivors)
	for j := 0; j < d && j < len(added); j++ {
		if _, seen := pos[added[j].key]; !seen {
			pos[added[j].key] = len(survivors) + j
		}
	}
	return pos
}
