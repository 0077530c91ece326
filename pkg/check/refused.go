package check

import "fmt"

// RefusedError: the check could not read what a verdict depends on (the
// user may not list policies, bindings, namespaces or a param kind), so
// it gives none rather than a verdict that could be wrong.
type RefusedError struct {
	// What names what could not be read, e.g.
	// "validatingadmissionpolicies.admissionregistration.k8s.io".
	What string
	Err  error
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("cannot check admission policies: listing %s: %v (--check needs list on validatingadmissionpolicies, their bindings, mutating policies and webhooks, namespaces and the policies' param kinds)", e.What, e.Err)
}

func (e *RefusedError) Unwrap() error { return e.Err }
