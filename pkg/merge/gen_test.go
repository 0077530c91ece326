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
// (duplicate merge keys, duplicate set values, nulls inside atomic lists,
// nulls in live), which have tests of their own.
type gen struct {
	r      *rand.Rand
	budget int
	// inAtomic counts the atomic lists being generated, inside which the
	// file holds no nulls.
	inAtomic int
}

// mask says which sides hold a value.
type mask struct{ l, f, c bool }

func (m mask) any() bool { return m.l || m.f || m.c }

// sides is one value per side; absent sides are unset.
type sides struct {
	l, f, c       any
	inL, inF, inC bool
}

func newGen(seed uint64) *gen {
	return &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), budget: 60}
}

// triple returns the three objects; last-applied is nil one time in eight.
func (g *gen) triple(root *schema.Node) (l, f, c map[string]any) {
	within := mask{l: g.r.IntN(8) != 0, f: true, c: true}
	s := g.object(root, within, 0)
	return asMap(s.l), asMap(s.f), asMap(s.c)
}

func (g *gen) chance(n int) bool { return g.r.IntN(n) == 0 }

// subMask picks the sides holding a field, among those holding its parent.
func (g *gen) subMask(parent mask) mask {
	for {
		m := mask{l: parent.l && g.chance(2), f: parent.f && !g.chance(3), c: parent.c && !g.chance(3)}
		if m.any() || !parent.any() {
			return m
		}
	}
}

func (g *gen) object(n *schema.Node, m mask, depth int) sides {
	out := sides{inL: m.l, inF: m.f, inC: m.c}
	maps := [3]map[string]any{{}, {}, {}}
	for _, name := range g.pickFields(n, depth) {
		fm := g.subMask(m)
		v := g.value(n.Field(name), fm, depth+1)
		put(maps, name, v, m)
	}
	out.l, out.f, out.c = maps[0], maps[1], maps[2]
	return out
}

// put stores a field's values, turning some file values into null.
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

// pickFields chooses a few known fields (or map keys) of an object.
func (g *gen) pickFields(n *schema.Node, depth int) []string {
	if n == nil || n.Type != schema.Object || depth > 9 || g.budget <= 0 {
		return nil
	}
	names := fieldNames(n)
	count := 1 + g.r.IntN(3)
	if depth > 4 {
		count = g.r.IntN(3)
	}
	var out []string
	for range count {
		if len(names) == 0 {
			break
		}
		i := g.r.IntN(len(names))
		out = append(out, names[i])
		names = slices.Delete(names, i, i+1)
	}
	g.budget -= len(out)
	return out
}

// fieldNames lists struct fields with a usable schema, or a small key
// domain for map-like objects.
func fieldNames(n *schema.Node) []string {
	if len(n.Fields) == 0 {
		if n.Elem == nil {
			return nil
		}
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
func (g *gen) value(n *schema.Node, m mask, depth int) sides {
	var s sides
	switch n.TypeOf() {
	case schema.Object:
		s = g.object(n, m, depth)
	case schema.List:
		s = g.list(n, m, depth)
	default:
		s = g.scalars(m)
	}
	if s.inF && g.inAtomic == 0 && g.chance(20) {
		s.f = nil // the file clears the field
	}
	return s
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

func (g *gen) list(n *schema.Node, m mask, depth int) sides {
	switch listKind(n) {
	case schema.Map:
		return g.keyedList(n, m, depth)
	case schema.Set:
		return g.setList(m)
	}
	return g.atomicList(n, m, depth)
}

// keyedList gives each side a random subset of a small key domain, in a
// random order, and generates each element across the sides holding it.
func (g *gen) keyedList(n *schema.Node, m mask, depth int) sides {
	domain := []string{"k1", "k2", "k3", "k4"}
	order := [3][]string{g.subset(domain, m.l), g.subset(domain, m.f), g.subset(domain, m.c)}
	elems := map[string]sides{}
	for _, k := range domain {
		em := mask{l: slices.Contains(order[0], k), f: slices.Contains(order[1], k), c: slices.Contains(order[2], k)}
		if em.any() {
			elems[k] = g.element(n, k, em, depth)
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

// element generates one keyed element; key fields are set, not generated.
func (g *gen) element(n *schema.Node, key string, m mask, depth int) sides {
	s := g.object(n.Item(), m, depth)
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

func (g *gen) setList(m mask) sides {
	domain := []string{"a", "b", "c", "d"}
	var out [3][]any
	for i, present := range []bool{m.l, m.f, m.c} {
		for _, v := range g.subset(domain, present) {
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
		v := g.value(n.Item(), mask{f: true}, depth+1)
		if v.f != nil {
			out = append(out, v.f)
		}
	}
	return out
}

// String names a generated triple for failure messages.
func (s sides) String() string { return fmt.Sprintf("L=%v F=%v C=%v", s.l, s.f, s.c) }
