package check

import (
	"context"
	"fmt"

	admv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// mutator is a MutatingAdmissionPolicy (with its bindings) or a mutating
// webhook: what may change an object before the validating policies see
// it. Its match constraints are tested with the plugin's own matcher.
type mutator struct {
	what        string // e.g. "MutatingAdmissionPolicy add-team"
	constraints *admv1.MatchResources
	// bindings are a policy's bindings' match resources (nil entries
	// match everything the policy does); a webhook has none and needs
	// none (nil slice).
	bindings []*admv1.MatchResources
	policy   bool
}

func loadMutators(ctx context.Context, kube kubernetes.Interface) ([]mutator, error) {
	adm := kube.AdmissionregistrationV1()
	var out []mutator
	policies, err := adm.MutatingAdmissionPolicies().List(ctx, metav1.ListOptions{})
	switch {
	case apierrors.IsNotFound(err):
		// The server does not serve the API: no mutating policy.
	case err != nil:
		return nil, refused("mutatingadmissionpolicies.admissionregistration.k8s.io", err)
	default:
		bindings, err := adm.MutatingAdmissionPolicyBindings().List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, refused("mutatingadmissionpolicybindings.admissionregistration.k8s.io", err)
		}
		for _, p := range policies.Items {
			m := mutator{what: "MutatingAdmissionPolicy " + p.Name, constraints: p.Spec.MatchConstraints, policy: true}
			for _, b := range bindings.Items {
				if b.Spec.PolicyName == p.Name {
					m.bindings = append(m.bindings, b.Spec.MatchResources)
				}
			}
			if len(m.bindings) > 0 {
				out = append(out, m)
			}
		}
	}
	webhooks, err := adm.MutatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, refused("mutatingwebhookconfigurations.admissionregistration.k8s.io", err)
	}
	for _, config := range webhooks.Items {
		for _, w := range config.Webhooks {
			out = append(out, mutator{what: fmt.Sprintf("mutating webhook %s of %s", w.Name, config.Name), constraints: webhookConstraints(w)})
		}
	}
	return out, nil
}

// webhookConstraints are a webhook's rules and selectors as a policy's
// match constraints, which the same matcher reads.
func webhookConstraints(w admv1.MutatingWebhook) *admv1.MatchResources {
	m := &admv1.MatchResources{NamespaceSelector: w.NamespaceSelector, ObjectSelector: w.ObjectSelector, MatchPolicy: w.MatchPolicy}
	for _, r := range w.Rules {
		m.ResourceRules = append(m.ResourceRules, admv1.NamedRuleWithOperations{RuleWithOperations: r})
	}
	if m.NamespaceSelector == nil {
		m.NamespaceSelector = &metav1.LabelSelector{}
	}
	if m.ObjectSelector == nil {
		m.ObjectSelector = &metav1.LabelSelector{}
	}
	return m
}

// accessor presents match constraints to generic.PolicyMatcher.
type accessor struct {
	name        string
	constraints *admv1.MatchResources
}

func (a accessor) GetName() string                            { return a.name }
func (a accessor) GetNamespace() string                       { return "" }
func (a accessor) GetParamKind() *admv1.ParamKind             { return nil }
func (a accessor) GetMatchConstraints() *admv1.MatchResources { return a.constraints }
func (a accessor) GetFailurePolicy() *admv1.FailurePolicyType { return nil }
func (a accessor) GetPolicyName() types.NamespacedName        { return types.NamespacedName{Name: a.name} }
func (a accessor) GetParamRef() *admv1.ParamRef               { return nil }
func (a accessor) GetMatchResources() *admv1.MatchResources   { return a.constraints }
