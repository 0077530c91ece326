package plan

import "slices"

// The graph of a run's order: nodes are the run's objects, edges say "runs
// after". Declared edges must be acyclic (an error); inferred ones that close
// a cycle are dropped with a warning.

// active reports whether an edge still counts: declared ones always,
// inferred ones until their source is dropped.
func (o *orderer) active(e edge) bool { return e.source < 0 || !o.sources[e.source].dropped }

// components returns the strongly connected components of more than one
// node (Tarjan), each sorted by node index, over the edges keep accepts.
func (o *orderer) components(keep func(edge) bool) [][]int {
	n := len(o.nodes)
	index, low := make([]int, n), make([]int, n)
	onStack := make([]bool, n)
	for i := range index {
		index[i] = -1
	}
	var stack []int
	var out [][]int
	next := 0
	var visit func(v int)
	visit = func(v int) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for _, e := range o.preds[v] {
			if !keep(e) {
				continue
			}
			if index[e.from] < 0 {
				visit(e.from)
				low[v] = min(low[v], low[e.from])
			} else if onStack[e.from] {
				low[v] = min(low[v], index[e.from])
			}
		}
		if low[v] != index[v] {
			return
		}
		var comp []int
		for {
			w := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			onStack[w] = false
			comp = append(comp, w)
			if w == v {
				break
			}
		}
		if len(comp) > 1 || o.selfLoop(v, keep) {
			slices.Sort(comp)
			out = append(out, comp)
		}
	}
	for v := range n {
		if index[v] < 0 {
			visit(v)
		}
	}
	return out
}

func (o *orderer) selfLoop(v int, keep func(edge) bool) bool {
	for _, e := range o.preds[v] {
		if e.from == v && keep(e) {
			return true
		}
	}
	return false
}

// cycleFrom finds a shortest cycle through start inside comp, following
// edges backwards ("start runs after a, which runs after b, ..."): the
// members in that order, start first.
func (o *orderer) cycleFrom(start int, comp []int, keep func(edge) bool) []int {
	in := make(map[int]bool, len(comp))
	for _, v := range comp {
		in[v] = true
	}
	parent := map[int]int{}
	queue := []int{start}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, e := range o.preds[v] {
			if !keep(e) || !in[e.from] {
				continue
			}
			if e.from == start {
				return pathTo(parent, start, v)
			}
			if _, seen := parent[e.from]; !seen {
				parent[e.from] = v
				queue = append(queue, e.from)
			}
		}
	}
	return []int{start}
}

func pathTo(parent map[int]int, start, last int) []int {
	var rev []int
	for v := last; v != start; v = parent[v] {
		rev = append(rev, v)
	}
	path := []int{start}
	for i := len(rev) - 1; i >= 0; i-- {
		path = append(path, rev[i])
	}
	return path
}

// findDeclaredCycles refuses each cycle of depends-on edges, naming its
// members in order.
func (o *orderer) findDeclaredCycles() {
	declared := func(e edge) bool { return e.source < 0 }
	for _, comp := range o.components(declared) {
		cycle := o.cycleFrom(comp[0], comp, declared)
		ids := make([]ID, len(cycle))
		for i, v := range cycle {
			ids[i] = o.nodes[v].ID
		}
		o.problems = append(o.problems, OrderProblem{Kind: DependencyCycle, Node: comp[0], Object: ids[0], Source: o.nodes[comp[0]].Source, Cycle: ids})
	}
}

// levels gives each node its longest-path depth inside its declared wave
// (edges never leave a wave: declared ones to an earlier wave are implied
// by the wave boundary, inferred ones are only made inside a wave), and the
// edge that set it (-1 when none).
func (o *orderer) levels() (level, critical []int) {
	n := len(o.nodes)
	level, critical = make([]int, n), make([]int, n)
	indegree := make([]int, n)
	succ := make([][]int, n)
	for v := range n {
		critical[v] = -1
		for _, e := range o.preds[v] {
			if o.active(e) && o.waveOf[e.from] == o.waveOf[v] {
				indegree[v]++
				succ[e.from] = append(succ[e.from], v)
			}
		}
	}
	queue := make([]int, 0, n)
	for v := range n {
		if indegree[v] == 0 {
			queue = append(queue, v)
		}
	}
	for head := 0; head < len(queue); head++ {
		u := queue[head]
		for _, v := range succ[u] {
			indegree[v]--
			if indegree[v] == 0 {
				o.settle(v, level, critical)
				queue = append(queue, v)
			}
		}
	}
	return level, critical
}

// settle sets v's level from its predecessors, all settled already.
func (o *orderer) settle(v int, level, critical []int) {
	for i, e := range o.preds[v] {
		if !o.active(e) || o.waveOf[e.from] != o.waveOf[v] {
			continue
		}
		if l := level[e.from] + 1; l > level[v] || critical[v] < 0 {
			level[v], critical[v] = l, i
		}
	}
}
