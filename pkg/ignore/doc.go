// Package ignore filters the changes of a plan by rules: JSON pointers, jq
// path expressions and field managers, each scoped by group, kind,
// namespace and name (Argo CD's ignoreDifferences, so its rules paste
// in). It also classifies the changes of a diff by their cause (the file,
// server defaulting, mutating admission, another writer) and suggests the
// rules that silence what the file does not cause (Noise, for a diff), and
// makes a plan leave the fields the rules name as they are live
// (PlanFilter). It imports neither cobra nor a client: rules come in as
// bytes, objects as maps or unstructured objects.
package ignore
