package plan

import (
	"fmt"
	"strings"

	admv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapply/kapply/pkg/shown"
)

// Which objects of a run a webhook of the run is called for, as the API
// server decides it (k8s.io/apiserver's admission/plugin/webhook predicates:
// rules, namespace and object selectors), for the create or update the
// apply sends. matchConditions are not evaluated: they count as matching.

const admissionGroup = "admissionregistration.k8s.io"

func isWebhookConfiguration(id ID) bool {
	return id.Group == admissionGroup && (id.Kind == "ValidatingWebhookConfiguration" || id.Kind == "MutatingWebhookConfiguration")
}

func isAPIService(id ID) bool { return id.Group == "apiregistration.k8s.io" && id.Kind == "APIService" }

// webhookConfigurationDoc reads the fields of a Validating- or
// MutatingWebhookConfiguration that decide what it intercepts.
type webhookConfigurationDoc struct {
	Webhooks []webhookDoc `json:"webhooks"`
}

type webhookDoc struct {
	Name              string                     `json:"name"`
	ClientConfig      admv1.WebhookClientConfig  `json:"clientConfig"`
	Rules             []admv1.RuleWithOperations `json:"rules"`
	FailurePolicy     *admv1.FailurePolicyType   `json:"failurePolicy"`
	MatchPolicy       *admv1.MatchPolicyType     `json:"matchPolicy"`
	NamespaceSelector *metav1.LabelSelector      `json:"namespaceSelector"`
	ObjectSelector    *metav1.LabelSelector      `json:"objectSelector"`
}

// webhookMatcher is one webhook's interception test.
type webhookMatcher struct {
	rules  []admv1.RuleWithOperations
	exact  bool // matchPolicy Exact: the rule's apiVersions must name the object's
	nsSel  labels.Selector
	objSel labels.Selector
}

// readWebhooks reads a configuration's webhooks with failurePolicy Fail
// (the default of admissionregistration.k8s.io/v1; v1beta1 defaulted to
// Ignore and matchPolicy Exact): an Ignore webhook that does not answer
// admits, so nothing needs to wait for it.
func readWebhooks(n *OrderNode) ([]webhookDoc, []webhookMatcher, error) {
	var doc webhookConfigurationDoc
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(n.Object, &doc); err != nil {
		return nil, nil, fmt.Errorf("reading webhooks: %w", err)
	}
	var docs []webhookDoc
	var matchers []webhookMatcher
	for _, w := range doc.Webhooks {
		failurePolicy, matchPolicy := admv1.Fail, admv1.Equivalent
		if n.ID.Version == "v1beta1" {
			failurePolicy, matchPolicy = admv1.Ignore, admv1.Exact
		}
		if w.FailurePolicy != nil {
			failurePolicy = *w.FailurePolicy
		}
		if w.MatchPolicy != nil {
			matchPolicy = *w.MatchPolicy
		}
		if failurePolicy != admv1.Fail {
			continue
		}
		nsSel, err := selectorOf(w.NamespaceSelector)
		if err != nil {
			return nil, nil, fmt.Errorf("reading namespaceSelector of webhook %s: %w", shown.Text(w.Name), err)
		}
		objSel, err := selectorOf(w.ObjectSelector)
		if err != nil {
			return nil, nil, fmt.Errorf("reading objectSelector of webhook %s: %w", shown.Text(w.Name), err)
		}
		docs = append(docs, w)
		matchers = append(matchers, webhookMatcher{rules: w.Rules, exact: matchPolicy == admv1.Exact, nsSel: nsSel, objSel: objSel})
	}
	return docs, matchers, nil
}

// selectorOf: an absent selector selects everything, as the API server
// defaults it to {} (LabelSelectorAsSelector reads nil as nothing).
func selectorOf(s *metav1.LabelSelector) (labels.Selector, error) {
	if s == nil {
		return labels.Everything(), nil
	}
	return metav1.LabelSelectorAsSelector(s)
}

// matches reports whether the webhook is called for n, whose namespace's
// labels nsLabels gives.
func (m *webhookMatcher) matches(n *OrderNode, nsLabels func(string) labels.Set) bool {
	// The API server calls no webhook for admission configuration objects.
	if n.ID.Group == admissionGroup {
		return false
	}
	if !m.anyRuleMatches(n) {
		return false
	}
	if !m.objSel.Matches(labels.Set(labelsOf(n.Object))) {
		return false
	}
	return m.namespaceMatches(n, nsLabels)
}

// namespaceMatches: a cluster-scoped object is not exempted by a
// namespaceSelector, except a Namespace, matched by its own labels.
func (m *webhookMatcher) namespaceMatches(n *OrderNode, nsLabels func(string) labels.Set) bool {
	if m.nsSel.Empty() {
		return true
	}
	if isNamespace(n.ID) {
		return m.nsSel.Matches(namespaceObjectLabels(n))
	}
	if !n.Namespaced {
		return true
	}
	return m.nsSel.Matches(nsLabels(n.ID.Namespace))
}

func isNamespace(id ID) bool { return id.Group == "" && id.Kind == "Namespace" }

// namespaceObjectLabels are a Namespace's labels as the API server sees
// them: with kubernetes.io/metadata.name, which it always sets.
func namespaceObjectLabels(n *OrderNode) labels.Set {
	set := labels.Set{}
	for k, v := range labelsOf(n.Object) {
		set[k] = v
	}
	set[corev1.LabelMetadataName] = n.ID.Name
	return set
}

func (m *webhookMatcher) anyRuleMatches(n *OrderNode) bool {
	for i := range m.rules {
		if ruleMatches(&m.rules[i], n, m.exact) {
			return true
		}
	}
	return false
}

// ruleMatches follows the API server's rules.Matcher for a create or an
// update of the object itself (no subresource). Under matchPolicy
// Equivalent the server also calls the webhook for other versions of the
// resource, so the version is then not compared.
func ruleMatches(r *admv1.RuleWithOperations, n *OrderNode, exact bool) bool {
	return anyOf(r.Operations, func(op admv1.OperationType) bool {
		return op == admv1.OperationAll || op == admv1.Create || op == admv1.Update
	}) &&
		anyOf(r.APIGroups, func(g string) bool { return g == "*" || g == n.ID.Group }) &&
		(!exact || anyOf(r.APIVersions, func(v string) bool { return v == "*" || v == n.ID.Version })) &&
		anyOf(r.Resources, func(res string) bool { return resourceMatches(res, n.Resource) }) &&
		scopeMatches(r.Scope, n)
}

// resourceMatches: "*" is every resource, "x/*" is x and its
// subresources, "*/*" everything, "*/status" only subresources.
func resourceMatches(rule, resource string) bool {
	res, sub, _ := strings.Cut(rule, "/")
	return (res == "*" || res == resource) && (sub == "*" || sub == "")
}

// scopeMatches: a Namespace counts as cluster-scoped.
func scopeMatches(scope *admv1.ScopeType, n *OrderNode) bool {
	if scope == nil || *scope == admv1.AllScopes {
		return true
	}
	if *scope == admv1.NamespacedScope {
		return n.Namespaced && !isNamespace(n.ID)
	}
	return !n.Namespaced || isNamespace(n.ID)
}

func anyOf[T any](list []T, ok func(T) bool) bool {
	for _, x := range list {
		if ok(x) {
			return true
		}
	}
	return false
}
