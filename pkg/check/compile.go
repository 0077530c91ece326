package check

import (
	admv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/cel/environment"
)

// compilePolicy compiles a policy as the API server's plugin does
// (validating.compilePolicy, unexported in k8s.io/apiserver): the same
// environment, variables, validations, matchConditions, messageExpressions
// and audit annotations, with the authorizer declared so an expression
// that uses it compiles (its use then makes the verdict unknown).
func compilePolicy(env *environment.EnvSet, policy *admv1.ValidatingAdmissionPolicy) validating.Validator {
	hasParam := policy.Spec.ParamKind != nil
	optionalVars := cel.OptionalVariableDeclarations{HasParams: hasParam, HasAuthorizer: true}
	messageVars := cel.OptionalVariableDeclarations{HasParams: hasParam, HasAuthorizer: false}
	failurePolicy := policy.Spec.FailurePolicy
	compiler, err := cel.NewCompositedCompiler(env)
	if err != nil {
		return validating.NewValidator(nil, nil, nil, nil, failurePolicy, err)
	}
	compiler.CompileAndStoreVariables(variables(policy.Spec.Variables), optionalVars, environment.StoredExpressions)
	var matcher matchconditions.Matcher
	if conditions := policy.Spec.MatchConditions; len(conditions) > 0 {
		accessors := make([]cel.ExpressionAccessor, len(conditions))
		for i := range conditions {
			accessors[i] = (*matchconditions.MatchCondition)(&conditions[i])
		}
		matcher = matchconditions.NewMatcher(compiler.CompileCondition(accessors, optionalVars, environment.StoredExpressions), failurePolicy, "policy", "validate", policy.Name)
	}
	return validating.NewValidator(
		compiler.CompileCondition(validations(policy.Spec.Validations), optionalVars, environment.StoredExpressions),
		matcher,
		compiler.CompileCondition(auditAnnotations(policy.Spec.AuditAnnotations), optionalVars, environment.StoredExpressions),
		compiler.CompileCondition(messageExpressions(policy.Spec.Validations), messageVars, environment.StoredExpressions),
		failurePolicy,
		nil,
	)
}

func validations(in []admv1.Validation) []cel.ExpressionAccessor {
	out := make([]cel.ExpressionAccessor, len(in))
	for i, v := range in {
		out[i] = &validating.ValidationCondition{Expression: v.Expression, Message: v.Message, Reason: v.Reason}
	}
	return out
}

// messageExpressions keeps the validations' indexes: a validation without
// a messageExpression has a nil entry, as the plugin's.
func messageExpressions(in []admv1.Validation) []cel.ExpressionAccessor {
	out := make([]cel.ExpressionAccessor, len(in))
	for i, v := range in {
		if v.MessageExpression != "" {
			out[i] = &validating.MessageExpressionCondition{MessageExpression: v.MessageExpression}
		}
	}
	return out
}

func auditAnnotations(in []admv1.AuditAnnotation) []cel.ExpressionAccessor {
	out := make([]cel.ExpressionAccessor, len(in))
	for i, a := range in {
		out[i] = &validating.AuditAnnotationCondition{Key: a.Key, ValueExpression: a.ValueExpression}
	}
	return out
}

func variables(in []admv1.Variable) []cel.NamedExpressionAccessor {
	out := make([]cel.NamedExpressionAccessor, len(in))
	for i, v := range in {
		out[i] = &validating.Variable{Name: v.Name, Expression: v.Expression}
	}
	return out
}
