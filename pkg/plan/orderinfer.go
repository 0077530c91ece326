package plan

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kapply/kapply/pkg/shown"
)

// Inferred order: the objects a webhook of the run intercepts, and the
// objects of an APIService's group and version, go after that webhook's
// configuration (or the APIService) and what it needs to answer: its
// Service and the workloads that Service selects.

// inferredSource is one webhook of a configuration, or one APIService.
type inferredSource struct {
	node       int    // the configuration or the APIService
	webhook    string // webhooks[].name ("" for an APIService)
	apiService bool
	label      string // how reasons and warnings name it
	matches    func(n *OrderNode) bool
	needs      []int // node, its Service, the Service's workloads
	workloads  []int
	intercepts []int // nodes that go after it (or wait in a later wave), ascending
	dropped    bool  // its edges closed a cycle: it orders nothing
}

func (s *inferredSource) String() string { return s.label }

func (o *orderer) inferSources() {
	nsLabels := o.namespaceLabelsFunc()
	for i := range o.nodes {
		n := &o.nodes[i]
		switch {
		case isWebhookConfiguration(n.ID):
			o.addWebhooks(i, nsLabels)
		case isAPIService(n.ID):
			o.addAPIService(i)
		}
	}
	for si := range o.sources {
		o.intercept(si)
	}
}

func (o *orderer) addWebhooks(i int, nsLabels func(string) labels.Set) {
	n := &o.nodes[i]
	docs, matchers, err := readWebhooks(n)
	if err != nil {
		o.warnings = append(o.warnings, fmt.Sprintf("%s: %v: objects it intercepts are not ordered after it", n.ID, err))
		return
	}
	kind := "validating"
	if n.ID.Kind == "MutatingWebhookConfiguration" {
		kind = "mutating"
	}
	for w := range docs {
		m := &matchers[w]
		src := &inferredSource{
			node:    i,
			webhook: docs[w].Name,
			label:   fmt.Sprintf("webhook %s/%s (%s)", kind, shown.Text(n.ID.Name), shown.Text(docs[w].Name)),
			matches: func(x *OrderNode) bool { return m.matches(x, nsLabels) },
			needs:   []int{i},
		}
		if svc := docs[w].ClientConfig.Service; svc != nil {
			o.addServiceNeeds(src, svc.Namespace, svc.Name)
		}
		o.sources = append(o.sources, src)
	}
}

// addAPIService: the objects of spec.group/spec.version wait for it. An
// APIService without a service is served by the API server itself.
func (o *orderer) addAPIService(i int) {
	n := &o.nodes[i]
	group, _, _ := unstructured.NestedString(n.Object, "spec", "group")
	version, _, _ := unstructured.NestedString(n.Object, "spec", "version")
	ns, _, _ := unstructured.NestedString(n.Object, "spec", "service", "namespace")
	name, hasService, _ := unstructured.NestedString(n.Object, "spec", "service", "name")
	if !hasService || version == "" {
		return
	}
	src := &inferredSource{
		node:       i,
		apiService: true,
		label:      "apiservice " + shown.Text(n.ID.Name),
		matches:    func(x *OrderNode) bool { return x.ID.Group == group && x.ID.Version == version },
		needs:      []int{i},
	}
	o.addServiceNeeds(src, ns, name)
	o.sources = append(o.sources, src)
}

// intercept finds what a source orders. Inference only splits a declared
// wave: a node in the same wave as everything the source needs goes after
// it; a node of a later wave waits in its gate; a node of an earlier wave
// is the user's declared choice (a warning, no order).
func (o *orderer) intercept(si int) {
	src := o.sources[si]
	var earlier []int
	for v := range o.nodes {
		if v == src.node || !src.matches(&o.nodes[v]) {
			continue
		}
		if contains(src.needs, v) {
			o.warnings = append(o.warnings, fmt.Sprintf("%s intercepts %s, which it needs to answer: not ordered after it", src, o.nodes[v].ID))
			continue
		}
		needWave := 0
		for _, u := range src.needs {
			needWave = max(needWave, o.waveOf[u])
		}
		if needWave > o.waveOf[v] {
			earlier = append(earlier, v)
			continue
		}
		src.intercepts = append(src.intercepts, v)
		for _, u := range src.needs {
			if o.waveOf[u] == o.waveOf[v] {
				o.preds[v] = append(o.preds[v], edge{from: u, source: si})
			}
		}
	}
	if len(earlier) > 0 {
		o.warnings = append(o.warnings, fmt.Sprintf("%s is in a later sync-wave than %d object(s) it intercepts (first: %s): they are not held for it",
			src, len(earlier), o.nodes[earlier[0]].ID))
	}
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// dropInferredCycles: declared edges are acyclic, so a cycle left runs
// through inferred edges; their sources order nothing (a warning), and
// the run falls back to the declared order for them.
func (o *orderer) dropInferredCycles() {
	for {
		comps := o.components(o.active)
		if len(comps) == 0 {
			return
		}
		for _, comp := range comps {
			cycle := o.cycleFrom(comp[0], comp, o.active)
			names := make([]string, 0, len(cycle)+1)
			for _, v := range cycle {
				names = append(names, o.nodes[v].ID.String())
			}
			names = append(names, names[0])
			inComp := make(map[int]bool, len(comp))
			for _, v := range comp {
				inComp[v] = true
			}
			var dropped []string
			for _, v := range comp {
				for _, e := range o.preds[v] {
					if e.source >= 0 && inComp[e.from] && !o.sources[e.source].dropped {
						o.sources[e.source].dropped = true
						dropped = append(dropped, o.sources[e.source].String())
					}
				}
			}
			o.warnings = append(o.warnings, fmt.Sprintf("inferred order cycle %s (→ reads \"runs after\"): not ordered after %s",
				strings.Join(names, " → "), strings.Join(dropped, ", ")))
		}
	}
}

// namespaceLabelsFunc gives a namespace's labels: a Namespace object of the
// run first, then the caller's, always with kubernetes.io/metadata.name.
func (o *orderer) namespaceLabelsFunc() func(string) labels.Set {
	cache := map[string]labels.Set{}
	for i := range o.nodes {
		if isNamespace(o.nodes[i].ID) {
			cache[o.nodes[i].ID.Name] = namespaceObjectLabels(&o.nodes[i])
		}
	}
	return func(ns string) labels.Set {
		if set, ok := cache[ns]; ok {
			return set
		}
		set := labels.Set{}
		if o.nsLabels != nil {
			for k, v := range o.nsLabels(ns) {
				set[k] = v
			}
		}
		set["kubernetes.io/metadata.name"] = ns
		cache[ns] = set
		return set
	}
}
