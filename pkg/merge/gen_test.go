package merge

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/kapply/kapply/pkg/schema"
)

// gen generates (last-applied, file, live) triples by walking a schema
// graph, over small domains so that keys and values collide across sides.
// It avoids what the engine deliberately does differently from kubectl
// (duplicate merge keys, duplicate set values, nulls inside atomic lists
// and replaced maps, nulls in live), which have tests of their own.
//
// Each triple aims at one strategy its kind's schema holds (target): at
// every level one picked field leads towards a node of that strategy, and
// file and live both hold the fields on that path, so that deep strategies
// (a retainKeys volume in a CronJob's pod template) are reached as often as
// shallow ones.
type gen struct {
	r      *rand.Rand
	budget int
	// inAtomic counts the atomic lists and replaced maps being generated,
	// inside which the file holds no nulls.
	inAtomic int
	target   strategy
	reach    *reachIndex
}

// mask says which sides hold a value.
type mask struct{ l, f, c bool }

func (m mask) any() bool { return m.l || m.f || m.c }

// sides is one value per side; absent sides are unset.
type sides struct {
	l, f, c       any
	inL, inF, inC bool
}

// newGen seeds a generator. reach (nil: no target) tells which subtrees
// lead to the target strategy.
func newGen(seed uint64, reach *reachIndex, target strategy) *gen {
	return &gen{
		r:      rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		budget: 60, target: target, reach: reach,
	}
}

// genTriple generates the seed's triple of a kind: the target is one of the
// strategies the kind's schema holds, chosen by the seed.
func genTriple(seed uint64, k *builtin, reach *reachIndex) (l, f, c map[string]any) {
	present := reach.reach(k.kind.Root, 0).list()
	if len(present) == 0 {
		return newGen(seed, nil, 0).triple(k.kind.Root)
	}
	target := present[seed%uint64(len(present))]
	return newGen(seed, reach, target).triple(k.kind.Root)
}

// triple returns the three objects; last-applied is nil one time in eight.
func (g *gen) triple(root *schema.Node) (l, f, c map[string]any) {
	within := mask{l: g.r.IntN(8) != 0, f: true, c: true}
	s := g.object(root, within, 0, true)
	return asMap(s.l), asMap(s.f), asMap(s.c)
}

func (g *gen) chance(n int) bool { return g.r.IntN(n) == 0 }

// subMask picks the sides holding a field, among those holding its parent.
// On the target's path file and live keep the field (when the parent has
// it on both), last-applied usually does.
func (g *gen) subMask(parent mask, onPath bool) mask {
	if onPath && parent.f && parent.c {
		return mask{l: parent.l && !g.chance(4), f: true, c: true}
	}
	for {
		m := mask{l: parent.l && g.chance(2), f: parent.f && !g.chance(3), c: parent.c && !g.chance(3)}
		if m.any() || !parent.any() {
			return m
		}
	}
}

// leads reports whether n, generated at depth, leads to the target.
func (g *gen) leads(n *schema.Node, depth int) bool {
	return g.reach != nil && g.reach.reach(n, depth).has(g.target)
}

func (g *gen) object(n *schema.Node, m mask, depth int, onPath bool) sides {
	out := sides{inL: m.l, inF: m.f, inC: m.c}
	maps := [3]map[string]any{{}, {}, {}}
	names, path := g.pickFields(n, depth, onPath)
	for i, name := range names {
		fieldOnPath := i == path
		v := g.value(n.Field(name), g.subMask(m, fieldOnPath), depth+1, fieldOnPath)
		put(maps, name, v, m)
	}
	out.l, out.f, out.c = maps[0], maps[1], maps[2]
	return out
}

// put stores a field's values on the sides holding the parent.
func put(maps [3]map[string]any, name string, v sides, parent mask) {
	if v.inL && parent.l {
		maps[0][name] = v.l
	}
	if v.inF && parent.f {
		maps[1][name] = v.f
	}
	if v.inC && parent.c {
		maps[2][name] = v.c
	}
}

// pickFields chooses a few known fields (or map keys) of an object. On the
// target's path the first pick leads to the target (path is its index; -1
// when no field does), whatever the budget.
func (g *gen) pickFields(n *schema.Node, depth int, onPath bool) (out []string, path int) {
	path = -1
	if (n != nil && n.Type != schema.Object && n.Type != schema.Unknown) || depth > maxGenDepth {
		return nil, path
	}
	names := fieldNames(n)
	if onPath {
		var leading []string
		for _, name := range names {
			if g.leads(n.Field(name), depth+1) {
				leading = append(leading, name)
			}
		}
		if len(leading) > 0 {
			pick := leading[g.r.IntN(len(leading))]
			out, path = append(out, pick), 0
			names = slices.DeleteFunc(names, func(s string) bool { return s == pick })
		}
	}
	if g.budget <= 0 {
		return out, path
	}
	count := 1 + g.r.IntN(3)
	if depth > 4 {
		count = g.r.IntN(3)
	}
	for len(out) < count && len(names) > 0 {
		i := g.r.IntN(len(names))
		out = append(out, names[i])
		names = slices.Delete(names, i, i+1)
	}
	g.budget -= len(out)
	return out, path
}

// fieldNames lists struct fields with a usable schema, or a small key
// domain for map-like objects and objects of unknown content.
func fieldNames(n *schema.Node) []string {
	if n == nil || len(n.Fields) == 0 {
		return []string{"x", "y", "z.k/w"}
	}
	var out []string
	for _, name := range sortedNodeKeys(n.Fields) {
		if n.Fields[name] != nil {
			out = append(out, name)
		}
	}
	return out
}

func sortedNodeKeys(m map[string]*schema.Node) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// value generates one field on the sides of m.
func (g *gen) value(n *schema.Node, m mask, depth int, onPath bool) sides {
	var s sides
	switch {
	case n.TypeOf() == schema.Object && n.AtomicMap:
		s = g.replacedMap(n, m, depth, onPath)
	case n.TypeOf() == schema.Object:
		s = g.object(n, m, depth, onPath)
	case n.TypeOf() == schema.List:
		s = g.list(n, m, depth, onPath)
	case n.TypeOf() == schema.Unknown:
		s = g.unknown(n, m, depth, onPath)
	default:
		s = g.scalars(m)
	}
	if s.inF && g.inAtomic == 0 && !onPath && g.chance(20) {
		s.f = nil // the file clears the field
	}
	return s
}

// replacedMap generates a map the file replaces whole, holding no nulls
// from the file: kubectl's patch carries them to the server verbatim,
// where the engine drops them (see TestIntendedNullInReplacedMap).
func (g *gen) replacedMap(n *schema.Node, m mask, depth int, onPath bool) sides {
	g.inAtomic++
	defer func() { g.inAtomic-- }()
	return g.object(n, m, depth, onPath)
}

// unknown generates a value of unknown schema: a map, a list or a scalar.
func (g *gen) unknown(n *schema.Node, m mask, depth int, onPath bool) sides {
	switch x := g.r.IntN(6); {
	case x < 2 || onPath:
		return g.object(n, m, depth, false)
	case x == 2:
		return g.atomicList(n, m, depth)
	}
	return g.scalars(m)
}

// scalars: the file usually agrees with live, last-applied with either.
func (g *gen) scalars(m mask) sides {
	c := g.scalar()
	f := c
	if g.chance(2) {
		f = g.scalar()
	}
	l := f
	if g.chance(3) {
		l = g.scalar()
	}
	return sides{l: l, f: f, c: c, inL: m.l, inF: m.f, inC: m.c}
}

func (g *gen) scalar() any {
	switch g.r.IntN(5) {
	case 0:
		return int64(g.r.IntN(3))
	case 1:
		return g.r.IntN(2) == 0
	}
	return []string{"a", "b", "c"}[g.r.IntN(3)]
}

func (g *gen) list(n *schema.Node, m mask, depth int, onPath bool) sides {
	switch listKind(n) {
	case schema.Map:
		return g.keyedList(n, m, depth, onPath)
	case schema.Set:
		return g.setList(m, onPath)
	}
	return g.atomicList(n, m, depth)
}

// keyedList gives each side a random subset of a small key domain, in a
// random order, and generates each element across the sides holding it.
// On the target's path file and live share at least two keys, and the
// first shared one continues the path.
func (g *gen) keyedList(n *schema.Node, m mask, depth int, onPath bool) sides {
	domain := []string{"k1", "k2", "k3", "k4"}
	order := [3][]string{g.subset(domain, m.l), g.subset(domain, m.f), g.subset(domain, m.c)}
	if onPath && m.f && m.c {
		g.share(&order[1], &order[2], domain[:2])
	}
	if onPath && g.target == deleteElement && m.l && m.c {
		g.dropFromFile(&order, domain[3])
	}
	elems := map[string]sides{}
	for _, k := range domain {
		em := mask{l: slices.Contains(order[0], k), f: slices.Contains(order[1], k), c: slices.Contains(order[2], k)}
		if em.any() {
			elems[k] = g.element(n, k, em, depth, onPath && k == domain[0])
		}
	}
	lists := [3][]any{}
	for i, ord := range order {
		lists[i] = []any{}
		for _, k := range ord {
			lists[i] = append(lists[i], pick(elems[k], i))
		}
	}
	return sides{l: lists[0], f: lists[1], c: lists[2], inL: m.l, inF: m.f, inC: m.c}
}

// share adds the keys to both lists where they lack them, at random places.
func (g *gen) share(a, b *[]string, keys []string) {
	for _, list := range []*[]string{a, b} {
		for _, k := range keys {
			if !slices.Contains(*list, k) {
				i := g.r.IntN(len(*list) + 1)
				*list = slices.Insert(*list, i, k)
			}
		}
	}
}

// dropFromFile makes key one that last-applied and live hold and the file
// dropped.
func (g *gen) dropFromFile(order *[3][]string, key string) {
	g.share(&order[0], &order[2], []string{key})
	order[1] = slices.DeleteFunc(order[1], func(k string) bool { return k == key })
}

// element generates one keyed element; key fields are set, not generated.
func (g *gen) element(n *schema.Node, key string, m mask, depth int, onPath bool) sides {
	s := g.object(n.Item(), m, depth, onPath)
	for _, e := range []any{s.l, s.f, s.c} {
		if em := asMap(e); em != nil {
			for _, kf := range n.Keys {
				em[kf] = key
			}
		}
	}
	return s
}

func pick(s sides, i int) any {
	return [3]any{s.l, s.f, s.c}[i]
}

func (g *gen) subset(domain []string, present bool) []string {
	if !present {
		return nil
	}
	out := slices.Clone(domain)
	g.r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out[:g.r.IntN(len(out)+1)]
}

func (g *gen) setList(m mask, onPath bool) sides {
	domain := []string{"a", "b", "c", "d"}
	var order [3][]string
	for i, present := range []bool{m.l, m.f, m.c} {
		order[i] = g.subset(domain, present)
	}
	if onPath && m.f && m.c {
		g.share(&order[1], &order[2], domain[:2])
	}
	if onPath && g.target == deleteValue && m.l && m.c {
		g.dropFromFile(&order, domain[3])
	}
	var out [3][]any
	for i, present := range []bool{m.l, m.f, m.c} {
		for _, v := range order[i] {
			out[i] = append(out[i], v)
		}
		if present && out[i] == nil {
			out[i] = []any{}
		}
	}
	return sides{l: out[0], f: out[1], c: out[2], inL: m.l, inF: m.f, inC: m.c}
}

// atomicList: one or two short lists shared among the sides.
func (g *gen) atomicList(n *schema.Node, m mask, depth int) sides {
	a, b := g.shortList(n, depth), g.shortList(n, depth)
	c, f, l := a, a, a
	if g.chance(2) {
		f = b
	}
	if g.chance(2) {
		l = b
	}
	return sides{l: l, f: f, c: c, inL: m.l, inF: m.f, inC: m.c}
}

func (g *gen) shortList(n *schema.Node, depth int) []any {
	g.inAtomic++
	defer func() { g.inAtomic-- }()
	out := []any{}
	for range g.r.IntN(3) {
		v := g.value(n.Item(), mask{f: true}, depth+1, false)
		if v.f != nil {
			out = append(out, v.f)
		}
	}
	return out
}

// String names a generated triple for failure messages.
func (s sides) String() string { return fmt.Sprintf("L=%v F=%v C=%v", s.l, s.f, s.c) }
