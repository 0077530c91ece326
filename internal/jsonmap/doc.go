// Package jsonmap decodes JSON into the values unstructured Kubernetes
// objects hold — map[string]any, []any, string, int64, float64, bool and
// nil — exactly as k8s.io/apimachinery/pkg/util/json.Unmarshal does into a
// map[string]any, in one pass.
//
// It exists for speed: apimachinery (through sigs.k8s.io/json, a copy of
// encoding/json) first runs a validating scanner over the whole input and
// then decodes it through reflection; kapply decodes every live object of
// every LIST and every last-applied record, tens of megabytes a run. Here
// a recursive-descent parser validates as it decodes, allocates each
// string at most once, and sizes each map and slice once from the members
// it has read. Short strings come from a cache of those decoded lately,
// so the objects of a list share their keys and common values (strings
// are immutable: sharing them is invisible but to the allocator).
//
// The tests compare it with apimachinery on generated, mutated, fuzzed
// and real-world documents.
package jsonmap
