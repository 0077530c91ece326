package merge

// unionOrder returns the keys of merged elements in merged order, then those
// only live has, in live order.
func unionOrder(ck, mk []keyed) []string {
	inM := keyedSet(mk)
	out := make([]string, 0, len(mk)+len(ck))
	for _, k := range mk {
		out = append(out, k.key)
	}
	for _, k := range ck {
		if !inM[k.key] {
			out = append(out, k.key)
		}
	}
	return out
}

// elemSide gathers the element with the key from the four lists.
func elemSide(lk []keyed, lIdx map[string]int, fk []keyed, fIdx map[string]int,
	ck []keyed, cIdx map[string]int, mk []keyed, mIdx map[string]int, key string) side {
	s := side{}
	s.l, s.inL = lookup(lk, lIdx, key)
	s.f, s.inF = lookup(fk, fIdx, key)
	s.c, s.inC = lookup(ck, cIdx, key)
	s.m, s.inM = lookup(mk, mIdx, key)
	return s
}

func lookup(ks []keyed, idx map[string]int, key string) (any, bool) {
	i, ok := idx[key]
	if !ok {
		return nil, false
	}
	return ks[i].m, true
}

// firstMap returns the first argument that is a map, for naming an element.
func firstMap(vs ...any) map[string]any {
	for _, v := range vs {
		if m, ok := v.(map[string]any); ok {
			return m
		}
	}
	return nil
}

func toKeyed(items []item) []keyed {
	out := make([]keyed, len(items))
	for i, it := range items {
		out[i] = keyed{key: it.key}
	}
	return out
}

// isEmpty reports an absent value or an empty map or list, which walking
// would not report.
func isEmpty(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return v == nil
}
