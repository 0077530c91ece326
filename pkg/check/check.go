package check

import (
	"context"
	"fmt"

	admv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/generic"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	celconfig "k8s.io/apiserver/pkg/apis/cel"

	"github.com/kapply/kapply/pkg/plan"
)

// objectInterfaces serve the matcher and versioned attributes: a check
// matches and evaluates each object in the version the plan sends it
// (no conversion; see docs/check.md).
var objectInterfaces = admission.NewObjectInterfacesFromScheme(runtime.NewScheme())

// request is one item as the server would see it.
type request struct {
	attrs admission.Attributes
	// namespace is the namespaceObject of the request (nil when
	// cluster-scoped).
	namespace *corev1.Namespace
	// versioned are the attributes by the kind a policy matched, made
	// once per request as the dispatcher does (their CEL values are
	// built lazily, once).
	versioned map[schema.GroupVersionKind]*admission.VersionedAttributes
}

// checkItem returns the verdicts of the cluster's policies on one request.
func (c *Checker) checkItem(ctx context.Context, req request) ([]plan.Verdict, error) {
	for _, m := range c.mutating {
		if c.mutatorMatches(req.attrs, m) {
			return []plan.Verdict{{Outcome: plan.Unknown, Policy: m.what,
				Message: m.what + " matches the object: the server validates it as mutated, which a check cannot know"}}, nil
		}
	}
	var verdicts []plan.Verdict
	for _, p := range c.policies {
		vs, err := c.checkPolicy(ctx, req, p)
		if err != nil {
			return nil, err
		}
		verdicts = append(verdicts, vs...)
	}
	return verdicts, nil
}

func (c *Checker) mutatorMatches(a admission.Attributes, m mutator) bool {
	matches, _, _, err := c.matcher.DefinitionMatches(a, objectInterfaces, accessor{name: m.what, constraints: m.constraints})
	if err != nil || !matches {
		return err != nil // a matcher that cannot tell: unknown, not a pass
	}
	if !m.policy {
		return true
	}
	for _, b := range m.bindings {
		if ok, err := c.matcher.BindingMatches(a, objectInterfaces, accessor{name: m.what, constraints: b}); ok || err != nil {
			return true
		}
	}
	return false
}

// checkPolicy follows the plugin's dispatcher (validating.dispatcher.
// Dispatch) for one policy, but keeps every decision as a verdict rather
// than the first denial.
func (c *Checker) checkPolicy(ctx context.Context, req request, p policy) ([]plan.Verdict, error) {
	definition := p.hook.Policy
	matches, matchResource, matchKind, err := c.matcher.DefinitionMatches(req.attrs, objectInterfaces, validating.NewValidatingAdmissionPolicyAccessor(definition))
	switch {
	case err != nil:
		return configError(definition, nil, err), nil
	case !matches:
		return nil, nil
	case p.hook.ConfigurationError != nil:
		return configError(definition, nil, p.hook.ConfigurationError), nil
	}
	var verdicts []plan.Verdict
	versioned := req.versioned[matchKind]
	for _, binding := range p.hook.Bindings {
		matches, err := c.matcher.BindingMatches(req.attrs, objectInterfaces, validating.NewValidatingAdmissionPolicyBindingAccessor(binding))
		if err != nil {
			verdicts = append(verdicts, configError(definition, binding, err)...)
			continue
		}
		if !matches {
			continue
		}
		params, err := generic.CollectParams(definition.Spec.ParamKind, p.hook.ParamInformer, p.hook.ParamScope,
			binding.Spec.ParamRef, req.attrs.GetNamespace(), nil, nil)
		if err != nil {
			verdicts = append(verdicts, configError(definition, binding, err)...)
			continue
		}
		if versioned == nil && len(params) > 0 {
			if versioned, err = admission.NewVersionedAttributes(req.attrs, matchKind, objectInterfaces); err != nil {
				verdicts = append(verdicts, configError(definition, binding, fmt.Errorf("failed to convert object version: %w", err))...)
				continue
			}
			req.versioned[matchKind] = versioned
		}
		for _, param := range params {
			verdicts = append(verdicts, c.evaluate(ctx, req, p, binding, matchResource, versioned, param)...)
		}
	}
	return verdicts, nil
}

// evaluate runs the policy's validations for one param and turns each
// failed one into a verdict per validationAction of the binding.
func (c *Checker) evaluate(ctx context.Context, req request, p policy, binding *admv1.ValidatingAdmissionPolicyBinding,
	resource schema.GroupVersionResource, versioned *admission.VersionedAttributes, param runtime.Object) []plan.Verdict {
	definition := p.hook.Policy
	if param != nil && param.GetObjectKind().GroupVersionKind().Empty() {
		param.GetObjectKind().SetGroupVersionKind(schema.FromAPIVersionAndKind(definition.Spec.ParamKind.APIVersion, definition.Spec.ParamKind.Kind))
	}
	authz := &unknownAuthorizer{}
	result := p.hook.Evaluator.Validate(ctx, resource, versioned, param, req.namespace, celconfig.RuntimeCELCostBudget, authz)
	if authz.asked.Load() {
		return []plan.Verdict{{Outcome: plan.Unknown, Policy: definition.Name, Binding: binding.Name,
			Message: "an expression asks the authorizer, which a check cannot consult"}}
	}
	var verdicts []plan.Verdict
	for _, d := range result.Decisions {
		if d.Action != validating.ActionDeny {
			continue
		}
		for _, action := range binding.Spec.ValidationActions {
			verdicts = append(verdicts, plan.Verdict{Outcome: outcomes[action], Policy: definition.Name, Binding: binding.Name, Message: d.Message})
		}
	}
	for _, a := range result.AuditAnnotations {
		if a.Action == validating.AuditAnnotationActionError {
			// As the plugin: an audit annotation that fails to evaluate
			// denies.
			verdicts = append(verdicts, plan.Verdict{Outcome: plan.Denied, Policy: definition.Name, Binding: binding.Name, Message: a.Error})
		}
	}
	return verdicts
}

var outcomes = map[admv1.ValidationAction]plan.Outcome{admv1.Deny: plan.Denied, admv1.Warn: plan.Warned, admv1.Audit: plan.Audited}

// configError is the plugin's answer to a policy or binding it cannot
// use: a denial under failurePolicy Fail (the default), nothing under
// Ignore.
func configError(definition *admv1.ValidatingAdmissionPolicy, binding *admv1.ValidatingAdmissionPolicyBinding, err error) []plan.Verdict {
	if fp := definition.Spec.FailurePolicy; fp != nil && *fp == admv1.Ignore {
		return nil
	}
	v := plan.Verdict{Outcome: plan.Denied, Policy: definition.Name, Message: fmt.Errorf("failed to configure policy: %w", err).Error()}
	if binding != nil {
		v.Binding = binding.Name
		v.Message = fmt.Errorf("failed to configure binding: %w", err).Error()
	}
	return []plan.Verdict{v}
}

// operationOptions are the options of each operation's request.
func operationOptions(op admission.Operation) runtime.Object {
	switch op {
	case admission.Create:
		return &metav1.CreateOptions{}
	case admission.Delete:
		return &metav1.DeleteOptions{}
	}
	return &metav1.UpdateOptions{}
}

func asObject(obj map[string]any) runtime.Object {
	if obj == nil {
		return nil
	}
	return &unstructured.Unstructured{Object: obj}
}
