package apply

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapply/kapply/pkg/plan"
)

// ordering is the run's order of its objects (plan.Order), by input index.
// A run that declares no order and holds no webhook configuration or
// APIService has one wave, and none of this is computed.
type ordering struct {
	waves    []int
	reasons  []string
	gates    []plan.Gate
	warnings []string
}

// several tells whether the run has more than one wave.
func (o ordering) several() bool { return len(o.gates) > 1 }

// orderKinds are the kinds whose presence in a run can split it into
// waves without any annotation: what a webhook or an aggregated API
// serves waits for it.
var orderKinds = map[k8sschema.GroupKind]bool{
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}: true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:   true,
	{Group: "apiregistration.k8s.io", Kind: "APIService"}:                           true,
}

// orderAnnotations are the annotations that declare an order, or name
// another tool's order (a warning says it is not honoured).
var orderAnnotations = []string{"argocd.argoproj.io/sync-wave", "config.kubernetes.io/depends-on",
	"argocd.argoproj.io/hook", "helm.sh/hook"}

// mayOrder tells whether anything in the run can make a second wave: the
// one scan a run without order pays.
func mayOrder(objects []*object) bool {
	for _, o := range objects {
		if orderKinds[o.Obj.GroupVersionKind().GroupKind()] {
			return true
		}
		annotations := o.Obj.GetAnnotations()
		for _, a := range orderAnnotations {
			if _, ok := annotations[a]; ok {
				return true
			}
		}
	}
	return false
}

// order computes the run's waves (r.ordering), before anything is
// written. An order that cannot run (a depends-on on an object the run
// lacks, a cycle) is an error: the run writes nothing.
func (r *runner) order(ctx context.Context, objects []*object) error {
	if !mayOrder(objects) {
		r.ordering = ordering{}
		return nil
	}
	crds, _ := crdsOf(objects)
	nodes := make([]plan.OrderNode, len(objects))
	for i, o := range objects {
		nodes[i] = r.orderNode(o, crds)
	}
	got, err := plan.Order(nodes, r.namespaceLabels(ctx, objects))
	if err != nil {
		return err
	}
	r.ordering = ordering{waves: got.Waves, reasons: got.Reasons, gates: got.Gates, warnings: got.Warnings}
	return nil
}

// orderNode is o as ordering sees it: its identity with the namespace it
// will be applied in, its resource and scope as the server (or the run's
// CRD) names them, else as guessed from the kind.
func (r *runner) orderNode(o *object, crds crdIndex) plan.OrderNode {
	gvk := o.Obj.GroupVersionKind()
	var mapping *meta.RESTMapping
	if m, ok := crds.mapping(gvk); ok {
		mapping = m
	} else if m, err := r.mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
		mapping = m
	}
	node := plan.OrderNode{ID: plan.IDOf(o.Obj), Object: o.Obj.Object, Source: o.Source}
	if mapping != nil {
		node.Resource = mapping.Resource.Resource
		node.Namespaced = mapping.Scope.Name() == meta.RESTScopeNameNamespace
	} else {
		plural, _ := meta.UnsafeGuessKindToResource(gvk)
		node.Resource, node.Namespaced = plural.Resource, o.Obj.GetNamespace() != ""
	}
	if node.Namespaced && node.ID.Namespace == "" {
		node.ID.Namespace = r.opts.Namespace
	}
	if !node.Namespaced {
		node.ID.Namespace = ""
	}
	return node
}

// namespaceLabels answers a namespace's labels for webhooks'
// namespaceSelectors: the run's Namespace object's, else the cluster's
// (read once), else none.
func (r *runner) namespaceLabels(ctx context.Context, objects []*object) func(string) map[string]string {
	inRun := map[string]map[string]string{}
	for _, o := range objects {
		if o.Obj.GroupVersionKind().GroupKind() == namespaceGK {
			inRun[o.Obj.GetName()] = withNameLabel(o.Obj.GetName(), o.Obj.GetLabels())
		}
	}
	var mu sync.Mutex
	read := map[string]map[string]string{}
	return func(ns string) map[string]string {
		if labels, ok := inRun[ns]; ok {
			return labels
		}
		mu.Lock()
		defer mu.Unlock()
		if labels, ok := read[ns]; ok {
			return labels
		}
		var labels map[string]string
		if live, err := r.dynamic.Resource(namespacesResource).Get(ctx, ns, metav1.GetOptions{}); err == nil {
			labels = live.GetLabels()
		}
		read[ns] = labels
		return labels
	}
}

// waveOf is object i's wave and why.
func (o ordering) waveOf(i int) (int, string) {
	if !o.several() {
		return 0, ""
	}
	return o.waves[i], o.reasons[i]
}

// plannedGates are the gates of a plan's waves, naming only what the
// plan sends: an object that could not be planned is not waited for (the
// plan reports its failure).
func plannedGates(gates []plan.Gate, items []plan.Item) []plan.Gate {
	planned := make(map[plan.ID]bool, len(items))
	for _, it := range items {
		planned[it.ID] = true
	}
	keep := func(ids []plan.ID) []plan.ID {
		var out []plan.ID
		for _, id := range ids {
			if planned[id] {
				out = append(out, id)
			}
		}
		return out
	}
	out := make([]plan.Gate, len(gates))
	for w, g := range gates {
		out[w] = plan.Gate{Ready: keep(g.Ready), APIServices: keep(g.APIServices)}
		for _, hook := range g.Webhooks {
			if planned[hook.Configuration] && planned[hook.Probe] {
				out[w].Webhooks = append(out[w].Webhooks, hook)
			}
		}
	}
	return out
}

// reverseWaves groups the places of objects by wave, last wave first:
// the order to delete them in, dependents before what they depend on. An
// order that cannot be computed (a depends-on on an object not deleted
// with them) falls back to their sync-waves alone, then to one group.
func (r *runner) reverseWaves(ctx context.Context, objects []*object) [][]int {
	all := allIndexes(len(objects))
	if !mayOrder(objects) {
		return [][]int{all}
	}
	nodes := make([]plan.OrderNode, len(objects))
	for i, o := range objects {
		nodes[i] = r.orderNode(o, nil)
	}
	got, err := plan.Order(nodes, nil)
	if err != nil {
		for i := range nodes {
			nodes[i].Object = onlySyncWave(nodes[i].Object)
		}
		if got, err = plan.Order(nodes, nil); err != nil {
			return [][]int{all}
		}
	}
	groups := make([][]int, len(got.Gates))
	for i, w := range got.Waves {
		last := len(groups) - 1 - w
		groups[last] = append(groups[last], i)
	}
	return groups
}

// onlySyncWave is obj's metadata with its sync-wave annotation alone.
func onlySyncWave(obj map[string]any) map[string]any {
	u := &unstructured.Unstructured{Object: obj}
	out := &unstructured.Unstructured{Object: map[string]any{"apiVersion": u.GetAPIVersion(), "kind": u.GetKind(),
		"metadata": map[string]any{"name": u.GetName(), "namespace": u.GetNamespace()}}}
	if wave, ok := u.GetAnnotations()["argocd.argoproj.io/sync-wave"]; ok {
		out.SetAnnotations(map[string]string{"argocd.argoproj.io/sync-wave": wave})
	}
	return out.Object
}

// withNameLabel is a Namespace's labels as the API server stores them:
// with kubernetes.io/metadata.name, which it always sets (webhooks
// select namespaces by it: gatekeeper leaves its own out so).
func withNameLabel(name string, labels map[string]string) map[string]string {
	out := make(map[string]string, len(labels)+1)
	for k, v := range labels {
		out[k] = v
	}
	out["kubernetes.io/metadata.name"] = name
	return out
}
