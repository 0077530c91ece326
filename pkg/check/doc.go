// Package check evaluates the cluster's ValidatingAdmissionPolicies on a
// Plan's items (kapply --check): for each item, the object the server
// would receive, with the request's attributes (CREATE, UPDATE with the
// live object as oldObject, DELETE for a prune), is put through
// k8s.io/apiserver's own matcher, CEL compiler and validator, so a verdict
// is what the API server's ValidatingAdmissionPolicy plugin would decide.
// The verdicts are kept on the plan's items (plan.Verdict).
//
// What it cannot know it says: where a MutatingAdmissionPolicy or a
// mutating webhook matches the object (the server validates the mutated
// object), or an expression asks the authorizer, the verdict is Unknown.
// A user who may not list what the check must read gets a
// RefusedError, never a silent pass.
//
// Only cmd imports this package; pkg/apply and pkg/plan do not.
package check
