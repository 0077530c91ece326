// Package health decides an object's readiness by CEL expressions the user
// wrote for its kind, in place of kstatus: the rules of a --health-file, in
// Flux's form (a Kustomization's spec.healthCheckExprs, RFC-0009) or as a
// plain list of the same entries.
//
// Parse reads the rules, Compile compiles each expression once with
// Kubernetes' CEL environment (k8s.io/apiserver/pkg/cel/environment: the
// libraries and cost limit of CRD validation rules), and Checker.Status
// evaluates them for an object. The environment builds in
// k8s.io/component-base, and with it pflag and cobra, so only the command
// imports this package: pkg/wait takes Checker.Status as a plain function
// (wait.Options.Status) and pkg/apply never builds CEL in
// (internal/depcheck TestHealthStaysOutOfTheLibrary).
package health
