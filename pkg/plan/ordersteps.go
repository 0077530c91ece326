package plan

import (
	"fmt"
	"slices"
	"strings"
)

// steps numbers the steps (declared waves ascending, each split by its
// longest path) and says per step what it waits for and per node why.
func (o *orderer) steps() Ordering {
	level, critical := o.levels()
	depth := make([]int, len(o.waves)) // steps per declared wave
	for v := range o.nodes {
		depth[o.waveOf[v]] = max(depth[o.waveOf[v]], level[v]+1)
	}
	first := make([]int, len(o.waves)+1) // first step of each declared wave
	for w, d := range depth {
		first[w+1] = first[w] + d
	}
	ord := Ordering{
		Waves:    make([]int, len(o.nodes)),
		Reasons:  make([]string, len(o.nodes)),
		Warnings: o.warnings,
	}
	for v := range o.nodes {
		ord.Waves[v] = first[o.waveOf[v]] + level[v]
		ord.Reasons[v] = o.reason(v, critical[v], ord.Waves[v])
	}
	ord.Gates = o.gates(ord.Waves, first)
	return ord
}

func (o *orderer) reason(v, critical, step int) string {
	var parts []string
	if o.hasWave[v] {
		parts = append(parts, fmt.Sprintf("sync-wave %d", o.waves[o.waveOf[v]]))
	}
	if critical >= 0 {
		e := o.preds[v][critical]
		if e.source < 0 {
			parts = append(parts, "depends-on "+e.ref)
		} else {
			parts = append(parts, "after "+o.sources[e.source].String())
		}
	}
	if len(parts) == 0 && step > 0 {
		return "sync-wave 0" // the default, as Argo CD reads an object without the annotation
	}
	return strings.Join(parts, "; ")
}

// gateSet gathers one step's gate without duplicates.
type gateSet struct {
	ready       map[int]bool
	webhooks    map[int]int // source → probe node
	apiServices map[int]bool
}

func (o *orderer) gates(step []int, first []int) []Gate {
	sets := make([]gateSet, first[len(first)-1])
	add := func(s int) *gateSet {
		if sets[s].ready == nil {
			sets[s] = gateSet{ready: map[int]bool{}, webhooks: map[int]int{}, apiServices: map[int]bool{}}
		}
		return &sets[s]
	}
	// A declared wave waits for every object of the wave before it.
	for v := range o.nodes {
		if w := o.waveOf[v]; w+1 < len(o.waves) {
			add(first[w+1]).ready[v] = true
		}
	}
	for v := range o.nodes {
		for _, e := range o.preds[v] {
			if e.source < 0 && o.waveOf[e.from] == o.waveOf[v] {
				add(step[v]).ready[e.from] = true
			}
		}
	}
	for si, src := range o.sources {
		if src.dropped {
			continue
		}
		for _, v := range src.intercepts {
			g := add(step[v])
			for _, w := range src.workloads {
				g.ready[w] = true
			}
			if src.apiService {
				g.apiServices[src.node] = true
			} else if _, ok := g.webhooks[si]; !ok {
				g.webhooks[si] = v
			}
		}
	}
	out := make([]Gate, len(sets))
	for s := range sets {
		out[s] = o.gate(&sets[s])
	}
	return out
}

func (o *orderer) gate(g *gateSet) Gate {
	var out Gate
	for _, v := range sortedKeys(g.ready) {
		out.Ready = append(out.Ready, o.nodes[v].ID)
	}
	for _, v := range sortedKeys(g.apiServices) {
		out.APIServices = append(out.APIServices, o.nodes[v].ID)
	}
	sources := make([]int, 0, len(g.webhooks))
	for si := range g.webhooks {
		sources = append(sources, si)
	}
	slices.Sort(sources)
	for _, si := range sources {
		src := o.sources[si]
		out.Webhooks = append(out.Webhooks, WebhookGate{Configuration: o.nodes[src.node].ID, Webhook: src.webhook, Probe: o.nodes[g.webhooks[si]].ID})
	}
	return out
}

func sortedKeys(m map[int]bool) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
