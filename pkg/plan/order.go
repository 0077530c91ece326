package plan

// Ordering a run: which objects are sent in which step, and what each step
// waits for. Order is pure (no cluster): the caller gives it the run's
// objects and, for webhooks' namespaceSelectors, the namespaces' labels.
// Declared order comes from annotations (sync-wave, depends-on); inferred
// order puts the objects a webhook configuration or APIService of the run
// serves after that configuration and what it needs to answer.

// Annotations Order reads.
const (
	// SyncWaveAnnotation is Argo CD's sync wave: an integer, lower first.
	SyncWaveAnnotation = "argocd.argoproj.io/sync-wave"
	// Hooks of Argo CD and Helm are not honoured, only warned about.
	argoHookAnnotation = "argocd.argoproj.io/hook"
	helmHookAnnotation = "helm.sh/hook"
)

// orderAnnotations are the annotations that take a run off the fast path.
var orderAnnotations = [...]string{SyncWaveAnnotation, DependsOnAnnotation, argoHookAnnotation, helmHookAnnotation}

// OrderNode is one object of a run as ordering sees it.
type OrderNode struct {
	ID         ID     // the object's identity
	Resource   string // plural resource, e.g. "deployments" (webhook rules match resources)
	Namespaced bool
	// Object is the file's object: annotations and labels are read from it,
	// and so are webhook configurations, APIServices, Services' selectors
	// and workloads' pod template labels. Order does not modify it.
	Object map[string]any
	// Source is where the object was read from: an OrderError names it.
	Source Source
}

// Ordering is where each node runs: steps run one after the other, ascending.
type Ordering struct {
	Waves []int // per node (same index as the input): its step, dense 0..len(Gates)-1
	// Reasons says per node why it is in its step ("" for step 0 when
	// nothing is declared), e.g. `sync-wave -1`,
	// `depends-on apps/namespaces/db/StatefulSet/pg`,
	// `after webhook validating/cert-manager-webhook (webhook.cert-manager.io)`.
	Reasons []string
	Gates   []Gate // per step: what must hold before the step is sent (Gates[0] is empty)
	// Warnings: hooks not honoured, inferred order that was not used (cycles,
	// a webhook declared in a later wave than what it intercepts).
	Warnings []string
}

// Gate is what a step waits for before any of its objects is sent.
type Gate struct {
	Ready       []ID          // objects of earlier steps that must be ready (kstatus or health rules)
	Webhooks    []WebhookGate // webhooks of the run that must answer
	APIServices []ID          // APIServices of the run that must be Available
}

// WebhookGate names one webhook of a configuration of the run.
type WebhookGate struct {
	Configuration ID     // the ValidatingWebhookConfiguration or MutatingWebhookConfiguration
	Webhook       string // its webhooks[].name
	Probe         ID     // one object of the step it intercepts (server-dry-run to see it answer)
}

// Order computes the steps. namespaceLabels gives a namespace's labels (from
// the cluster) for webhooks' namespaceSelectors; nil means none known. A
// Namespace object of the run is read for its labels first, and every
// namespace carries kubernetes.io/metadata.name as the API server sets it.
//
// A run with no order annotation, no webhook configuration and no
// APIService is one step, computed in one pass without allocating per node:
// this is every plain apply, up to tens of thousands of objects.
//
// A declared order that cannot run is an *OrderError; nothing should be
// written then.
func Order(nodes []OrderNode, namespaceLabels func(namespace string) map[string]string) (Ordering, error) {
	if !anyOrderDeclared(nodes) {
		return oneStep(len(nodes)), nil
	}
	return newOrderer(nodes, namespaceLabels).run()
}

// oneStep is the ordering of a run that declares and infers nothing.
func oneStep(n int) Ordering {
	return Ordering{Waves: make([]int, n), Reasons: make([]string, n), Gates: []Gate{{}}}
}

func anyOrderDeclared(nodes []OrderNode) bool {
	for i := range nodes {
		if ordersOthers(nodes[i].ID) || hasOrderAnnotation(nodes[i].Object) {
			return true
		}
	}
	return false
}

func hasOrderAnnotation(obj map[string]any) bool {
	ann := annotationsOf(obj)
	if len(ann) == 0 {
		return false
	}
	for _, key := range orderAnnotations {
		if _, ok := ann[key]; ok {
			return true
		}
	}
	return false
}

// ordersOthers reports the kinds whose presence infers an order.
func ordersOthers(id ID) bool { return isWebhookConfiguration(id) || isAPIService(id) }

func annotationsOf(obj map[string]any) map[string]any {
	meta, _ := obj["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	return ann
}

// stringMap reads a map of strings from a decoded object, skipping values
// that are not strings (bad input is not ours to refuse here).
func stringMap(v any) map[string]string {
	m, _ := v.(map[string]any)
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}
