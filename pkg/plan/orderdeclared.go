package plan

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/kapply/kapply/pkg/shown"
)

// orderer holds the state of one Order call that left the fast path.
type orderer struct {
	nodes    []OrderNode
	nsLabels func(string) map[string]string

	hasWave  []bool // the node carries a sync-wave annotation
	waveOf   []int  // the node's declared wave index (into waves), dense
	waves    []int  // the declared wave values, ascending
	preds    [][]edge
	sources  []*inferredSource
	byRef    map[refKey]int
	problems []OrderProblem
	warnings []string
}

// edge: node `from` must run before the node whose preds hold it.
type edge struct {
	from   int
	source int    // -1 for a declared depends-on, else an index into sources
	ref    string // the depends-on reference as written (declared edges)
}

// refKey is how a depends-on reference finds a node: no version, and a
// namespace only for namespaced objects.
type refKey struct{ group, kind, namespace, name string }

func keyOf(n *OrderNode) refKey {
	k := refKey{group: n.ID.Group, kind: n.ID.Kind, name: n.ID.Name}
	if n.Namespaced {
		k.namespace = n.ID.Namespace
	}
	return k
}

func newOrderer(nodes []OrderNode, nsLabels func(string) map[string]string) *orderer {
	o := &orderer{
		nodes:    nodes,
		nsLabels: nsLabels,
		hasWave:  make([]bool, len(nodes)),
		waveOf:   make([]int, len(nodes)),
		preds:    make([][]edge, len(nodes)),
		byRef:    make(map[refKey]int, len(nodes)),
	}
	for i := range nodes {
		if _, dup := o.byRef[keyOf(&nodes[i])]; !dup {
			o.byRef[keyOf(&nodes[i])] = i
		}
	}
	return o
}

func (o *orderer) run() (Ordering, error) {
	o.warnHooks()
	o.readWaves()
	o.readDependsOn()
	o.findDeclaredCycles()
	if len(o.problems) > 0 {
		sort.SliceStable(o.problems, func(i, j int) bool { return o.problems[i].Node < o.problems[j].Node })
		return Ordering{}, &OrderError{Problems: o.problems}
	}
	o.inferSources()
	o.dropInferredCycles()
	return o.steps(), nil
}

func (o *orderer) problem(kind OrderProblemKind, node int, format string, args ...any) {
	o.problems = append(o.problems, OrderProblem{Kind: kind, Node: node, Object: o.nodes[node].ID, Source: o.nodes[node].Source, Detail: fmt.Sprintf(format, args...)})
}

func (o *orderer) warnHooks() {
	for i := range o.nodes {
		ann := annotationsOf(o.nodes[i].Object)
		for _, key := range [...]string{argoHookAnnotation, helmHookAnnotation} {
			if v, ok := ann[key]; ok {
				o.warnings = append(o.warnings, fmt.Sprintf("%s%s: annotation %s=%s is not honoured: the object is applied like any other",
					o.nodes[i].Source.where(), o.nodes[i].ID, key, shown.Text(fmt.Sprint(v))))
			}
		}
	}
}

// readWaves reads each node's sync-wave (default 0) and numbers the
// distinct values densely, ascending.
func (o *orderer) readWaves() {
	value := make([]int, len(o.nodes))
	distinct := map[int]bool{0: false}
	for i := range o.nodes {
		v, ok := annotationsOf(o.nodes[i].Object)[SyncWaveAnnotation]
		if !ok {
			distinct[0] = true
			continue
		}
		s, isString := v.(string)
		wave, err := strconv.Atoi(s)
		if !isString || err != nil {
			o.problem(InvalidSyncWave, i, "%s %q is not an integer", SyncWaveAnnotation, fmt.Sprint(v))
			distinct[0] = true
			continue
		}
		o.hasWave[i], value[i], distinct[wave] = true, wave, true
	}
	for w, used := range distinct {
		if used {
			o.waves = append(o.waves, w)
		}
	}
	sort.Ints(o.waves)
	for i := range o.nodes {
		o.waveOf[i] = sort.SearchInts(o.waves, value[i])
	}
}

// readDependsOn turns each depends-on reference into an edge, refusing
// duplicates, references outside the run and references to a later wave.
func (o *orderer) readDependsOn() {
	for i := range o.nodes {
		v, ok := annotationsOf(o.nodes[i].Object)[DependsOnAnnotation]
		if !ok {
			continue
		}
		s, isString := v.(string)
		if !isString {
			o.problem(InvalidDependsOn, i, "%s is not a string", DependsOnAnnotation)
			continue
		}
		refs, err := ParseDependsOn(s)
		if err != nil {
			o.problem(InvalidDependsOn, i, "%v", err)
			continue
		}
		seen := make(map[DependsOnRef]bool, len(refs))
		for _, ref := range refs {
			if seen[ref] {
				o.problem(DuplicateDependency, i, "%s names %s twice", DependsOnAnnotation, shown.Text(ref.String()))
				continue
			}
			seen[ref] = true
			o.addDependency(i, ref)
		}
	}
}

func (o *orderer) addDependency(i int, ref DependsOnRef) {
	dep, ok := o.byRef[refKey{ref.Group, ref.Kind, ref.Namespace, ref.Name}]
	if !ok {
		o.problem(DependencyNotInRun, i, "depends on %s, which is not in the run%s", shown.Text(ref.String()), o.scopeHint(ref))
		return
	}
	if o.waveOf[dep] > o.waveOf[i] {
		o.problem(DependencyLaterWave, i, "(sync-wave %d) depends on %s (sync-wave %d), which runs later",
			o.waves[o.waveOf[i]], o.nodes[dep].ID, o.waves[o.waveOf[dep]])
		return
	}
	o.preds[i] = append(o.preds[i], edge{from: dep, source: -1, ref: ref.String()})
}

// scopeHint explains a reference that misses only by its namespace: the
// annotation names a namespace for namespaced objects only.
func (o *orderer) scopeHint(ref DependsOnRef) string {
	for i := range o.nodes {
		n := &o.nodes[i]
		if n.ID.Kind != ref.Kind || n.ID.Name != ref.Name {
			continue
		}
		if n.ID.Group != ref.Group {
			if ref.Group == n.ID.Version && (ref.Namespace == "") != n.Namespaced {
				fixed := DependsOnRef{Group: n.ID.Group, Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name}
				return fmt.Sprintf(" (a reference names the group, empty for core, not the version: write %s)", shown.Text(fixed.String()))
			}
			continue
		}
		if n.Namespaced && ref.Namespace == "" {
			fixed := DependsOnRef{Group: ref.Group, Kind: ref.Kind, Namespace: n.ID.Namespace, Name: ref.Name}
			return fmt.Sprintf(" (%s is namespaced: write %s)", n.ID, shown.Text(fixed.String()))
		}
		if !n.Namespaced && ref.Namespace != "" {
			fixed := DependsOnRef{Group: ref.Group, Kind: ref.Kind, Name: ref.Name}
			return fmt.Sprintf(" (%s is cluster-scoped: write %s)", n.ID, shown.Text(fixed.String()))
		}
	}
	return ""
}
