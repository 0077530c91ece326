package merge

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/schema"
)

// strategy is one way a field merges, or one directive of kubectl's patch,
// that a generated triple can exercise.
type strategy int

const (
	// replaceMap: a built-in map with patch strategy replace, which file
	// and live both hold and which differ (PodDisruptionBudget selector).
	replaceMap strategy = iota
	// atomicMap: a custom resource's x-kubernetes-map-type atomic map,
	// held and differing on both sides.
	atomicMap
	// retainKeys: an object with patch strategy retainKeys where live holds
	// a field that neither the file nor last-applied sets.
	retainKeys
	// keyedList: a list merged by key whose file and live share a key.
	keyedList
	// multiKey: the same, for a list whose x-kubernetes-list-map-keys are
	// wider than its merge key (container ports), or several keys.
	multiKey
	// setList: a list of primitives merged as a set, on both sides.
	setList
	// atomicList: a list replaced whole, on both sides and different.
	atomicList
	// setElementOrder: a keyed or set list whose file orders common
	// elements differently from live ($setElementOrder).
	setElementOrder
	// deleteElement: a keyed element in last-applied and live, not in the
	// file ($patch: delete).
	deleteElement
	// deleteValue: a set value in last-applied and live, not in the file
	// ($deleteFromPrimitiveList).
	deleteValue
	// opaqueMap: a built-in map of objects or lists, or an object of
	// unknown content, where file and live hold different maps or lists
	// under one key (the server cannot merge into them; see opaque).
	opaqueMap
	numStrategies
)

var strategyNames = [numStrategies]string{
	"replace-map", "atomic-map", "retainKeys", "keyed-list", "multi-key",
	"set-list", "atomic-list", "$setElementOrder", "$patch:delete", "$deleteFromPrimitiveList", "opaque-map",
}

func (s strategy) String() string { return strategyNames[s] }

// strategies is a set of strategies.
type strategies uint32

func (s strategies) has(x strategy) bool { return s&(1<<x) != 0 }

func (s *strategies) add(x strategy) { *s |= 1 << x }

func (s strategies) list() []strategy {
	var out []strategy
	for x := range numStrategies {
		if s.has(x) {
			out = append(out, x)
		}
	}
	return out
}

func (s strategies) String() string {
	names := make([]string, 0, numStrategies)
	for _, x := range s.list() {
		names = append(names, x.String())
	}
	return strings.Join(names, ",")
}

// maxGenDepth is the depth below which the generator sets no fields.
const maxGenDepth = 9

// reachIndex answers which strategies the generator can exercise below a
// node generated at a depth: strategies under an atomic list or map are not
// merged, only carried, so they do not count. Graphs are cyclic; the depth
// bound makes the walk finite and memoizable.
type reachIndex struct {
	strategic bool
	memo      map[reachKey]strategies
}

type reachKey struct {
	n     *schema.Node
	depth int
}

func newReachIndex(strategic bool) *reachIndex {
	return &reachIndex{strategic: strategic, memo: map[reachKey]strategies{}}
}

func (r *reachIndex) reach(n *schema.Node, depth int) strategies {
	if n == nil || depth > maxGenDepth+1 {
		return 0
	}
	k := reachKey{n, depth}
	if s, ok := r.memo[k]; ok {
		return s
	}
	r.memo[k] = 0 // a cycle at the same depth adds nothing
	s := r.compute(n, depth)
	r.memo[k] = s
	return s
}

func (r *reachIndex) compute(n *schema.Node, depth int) strategies {
	var s strategies
	if r.strategic && opaque(n) && depth <= maxGenDepth {
		s.add(opaqueMap)
	}
	switch n.Type {
	case schema.Object:
		if n.AtomicMap {
			s.add(r.mapStrategy())
			return s
		}
		if depth > maxGenDepth {
			return s
		}
		if n.RetainKeys {
			s.add(retainKeys)
		}
		for _, name := range fieldNames(n) {
			s |= r.reach(n.Field(name), depth+1)
		}
	case schema.List:
		s = r.listStrategies(n)
		if listKind(n) == schema.Map {
			s |= r.reach(n.Item(), depth)
		}
	}
	return s
}

func (r *reachIndex) mapStrategy() strategy {
	if r.strategic {
		return replaceMap
	}
	return atomicMap
}

// listStrategies are the strategies of a list itself.
func (r *reachIndex) listStrategies(n *schema.Node) strategies {
	var s strategies
	switch listKind(n) {
	case schema.Map:
		s.add(keyedList)
		if len(n.IdentityKeys) > len(n.Keys) || len(n.Keys) > 1 {
			s.add(multiKey)
		}
		if r.strategic {
			s.add(setElementOrder)
			s.add(deleteElement)
		}
	case schema.Set:
		s.add(setList)
		if r.strategic {
			s.add(setElementOrder)
			s.add(deleteValue)
		}
	default:
		s.add(atomicList)
	}
	return s
}

// exercised walks a generated triple along the schema and returns the
// strategies it exercises (see the constants for what counts).
func exercised(l, f, c map[string]any, kind *schema.Kind) strategies {
	w := &coverWalk{r: newReachIndex(kind.Strategic)}
	w.object(l, f, c, kind.Root)
	if kind.Strategic && (intoOpaque(f, c, kind.Root) || intoOpaque(f, l, kind.Root)) {
		w.hit.add(opaqueMap)
	}
	return w.hit
}

// intoOpaque reports whether the file and another side hold different maps
// or lists under one key of an opaque object, where kubectl's diff of the
// two fails (see opaque).
func intoOpaque(f, o any, n *schema.Node) bool {
	fm, fIsMap := f.(map[string]any)
	om, oIsMap := o.(map[string]any)
	fl, fIsList := f.([]any)
	ol, oIsList := o.([]any)
	switch {
	case fIsMap && oIsMap:
		for k, fv := range fm {
			ov, inO := om[k]
			if !inO {
				continue
			}
			if opaque(n) && bothMapsOrLists(fv, ov) && !fieldpath.Equal(fv, ov) {
				return true
			}
			if intoOpaque(fv, ov, n.Field(k)) {
				return true
			}
		}
	case fIsList && oIsList && listKind(n) == schema.Map:
		fk, fOK := keyedOrNil(fl, n.Keys)
		ok, oOK := keyedOrNil(ol, n.Keys)
		if !fOK || !oOK {
			return false
		}
		oIdx := index(ok)
		for _, fe := range fk {
			if oe := elemAt(ok, oIdx, fe.key); oe != nil && intoOpaque(fe.m, oe, n.Item()) {
				return true
			}
		}
	}
	return false
}

type coverWalk struct {
	r   *reachIndex
	hit strategies
}

func (w *coverWalk) value(l, f, c any, n *schema.Node) {
	fm, fIsMap := f.(map[string]any)
	cm, cIsMap := c.(map[string]any)
	fl, fIsList := f.([]any)
	cl, cIsList := c.([]any)
	switch {
	case fIsMap && cIsMap:
		w.object(asMap(l), fm, cm, n)
	case fIsList && cIsList && n.TypeOf() == schema.List:
		w.list(listOrNil(l), fl, cl, n)
	}
}

func (w *coverWalk) object(l, f, c map[string]any, n *schema.Node) {
	if n != nil && n.AtomicMap {
		if !fieldpath.Equal(f, c) {
			w.hit.add(w.r.mapStrategy())
		}
		return
	}
	if n != nil && n.RetainKeys && slices.ContainsFunc(sortedKeys(c), func(k string) bool {
		_, inF := f[k]
		_, inL := l[k]
		return !inF && !inL
	}) {
		w.hit.add(retainKeys)
	}
	for k, fv := range f {
		if cv, inC := c[k]; inC {
			w.value(l[k], fv, cv, n.Field(k))
		}
	}
}

func (w *coverWalk) list(l, f, c []any, n *schema.Node) {
	switch listKind(n) {
	case schema.Map:
		w.keyed(l, f, c, n)
	case schema.Set:
		w.hit.add(setList)
		w.order(scalarItems(f), scalarItems(c))
		w.removed(scalarItems(l), scalarItems(f), scalarItems(c), deleteValue)
	default:
		if !fieldpath.Equal(f, c) {
			w.hit.add(atomicList)
		}
	}
}

func (w *coverWalk) keyed(l, f, c []any, n *schema.Node) {
	fk, fOK := keyedOrNil(f, n.Keys)
	ck, cOK := keyedOrNil(c, n.Keys)
	lk, lOK := keyedOrNil(l, n.Keys)
	if !fOK || !cOK || !lOK {
		return
	}
	cIdx, lIdx := index(ck), index(lk)
	shared := false
	for _, fe := range fk {
		if ci, ok := cIdx[fe.key]; ok {
			shared = true
			w.object(elemAt(lk, lIdx, fe.key), fe.m, ck[ci].m, n.Item())
		}
	}
	if shared {
		w.hit.add(keyedList)
		if len(n.IdentityKeys) > len(n.Keys) || len(n.Keys) > 1 {
			w.hit.add(multiKey)
		}
	}
	w.order(toItems(fk), toItems(ck))
	w.removed(toItems(lk), toItems(fk), toItems(ck), deleteElement)
}

func bothMapsOrLists(a, b any) bool {
	_, am := a.(map[string]any)
	_, bm := b.(map[string]any)
	_, al := a.([]any)
	_, bl := b.([]any)
	return am && bm || al && bl
}

func toItems(ks []keyed) []item {
	out := make([]item, len(ks))
	for i, k := range ks {
		out[i] = item{key: k.key}
	}
	return out
}

// order records a reordering of the elements file and live share.
func (w *coverWalk) order(f, c []item) {
	if !w.r.strategic {
		return
	}
	inF, inC := keySet(f), keySet(c)
	var a, b []string
	for _, it := range f {
		if inC[it.key] {
			a = append(a, it.key)
		}
	}
	for _, it := range c {
		if inF[it.key] {
			b = append(b, it.key)
		}
	}
	if !slices.Equal(a, b) {
		w.hit.add(setElementOrder)
	}
}

// removed records an element of last-applied and live the file dropped.
func (w *coverWalk) removed(l, f, c []item, s strategy) {
	if !w.r.strategic {
		return
	}
	inF, inC := keySet(f), keySet(c)
	for _, it := range l {
		if inC[it.key] && !inF[it.key] {
			w.hit.add(s)
			return
		}
	}
}

// coverage counts, per kind and strategy, the triples that exercised it.
// It also counts the triples that ran into each intended difference.
type coverage struct {
	triples     map[string]int
	hits        map[string]*[numStrategies]int
	differences map[difference]int
}

func newCoverage() *coverage {
	return &coverage{triples: map[string]int{}, hits: map[string]*[numStrategies]int{}, differences: map[difference]int{}}
}

func (cv *coverage) record(kind string, s strategies, d difference) {
	if d != "" {
		cv.differences[d]++
	}
	cv.triples[kind]++
	h := cv.hits[kind]
	if h == nil {
		h = &[numStrategies]int{}
		cv.hits[kind] = h
	}
	for _, x := range s.list() {
		h[x]++
	}
}

func (cv *coverage) add(o *coverage) {
	for d, n := range o.differences {
		cv.differences[d] += n
	}
	for k, n := range o.triples {
		cv.triples[k] += n
	}
	for k, h := range o.hits {
		mine := cv.hits[k]
		if mine == nil {
			mine = &[numStrategies]int{}
			cv.hits[k] = mine
		}
		for i := range h {
			mine[i] += h[i]
		}
	}
}

func (cv *coverage) differencesReport() string {
	var b strings.Builder
	for _, d := range []difference{opaqueMapDifference, customListDifference} {
		fmt.Fprintf(&b, "intended difference, %s: %d triples\n", d, cv.differences[d])
	}
	return b.String()
}

func (cv *coverage) total() (triples int, hits [numStrategies]int) {
	for k, n := range cv.triples {
		triples += n
		for i, h := range cv.hits[k] {
			hits[i] += h
		}
	}
	return triples, hits
}

// table prints one line per kind and a total: triples, then the triples
// that exercised each strategy ("-" where the kind's schema lacks it).
func (cv *coverage) table(kinds []*builtin, present map[string]strategies) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-62s %9s", "kind", "triples")
	for x := range numStrategies {
		fmt.Fprintf(&b, " %s", x)
	}
	b.WriteString("\n")
	for _, k := range kinds {
		fmt.Fprintf(&b, "%-62s %9d", k.name, cv.triples[k.name])
		h := cv.hits[k.name]
		for x := range numStrategies {
			cell := "-"
			if present[k.name].has(x) {
				cell = "0"
				if h != nil {
					cell = fmt.Sprint(h[x])
				}
			}
			fmt.Fprintf(&b, " %*s", len(x.String()), cell)
		}
		b.WriteString("\n")
	}
	triples, hits := cv.total()
	fmt.Fprintf(&b, "%-62s %9d", "TOTAL", triples)
	for x := range numStrategies {
		fmt.Fprintf(&b, " %*d", len(x.String()), hits[x])
	}
	b.WriteString("\n")
	return b.String()
}
