// Package depcheck holds the test that guards the main module's dependencies:
// no package of k8s.io/kubectl or k8s.io/kubernetes is built into kapply
// (kapply is not kubectl's apply with a new front) but kubectl's kuberc
// loader, into cmd/ only, and no replace
// directives (so `go install ...@latest` works).
package depcheck
