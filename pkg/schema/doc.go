// Package schema answers, for any field path of a Kubernetes object, how the
// three-way merge treats it: replace a scalar, merge a map, and replace, merge
// as a set or merge by key a list. Strategies come from the server's OpenAPI v3
// (built-in kinds), from a CRD's structural schema (custom resources), and from
// list keys a user declares for lists a CRD leaves unmarked.
//
// The result is a graph of *Node values; a nil *Node is a field the schema does
// not know, and behaves as in kubectl: maps merge, lists are replaced whole.
//
// Sources, in order of precedence (see Resolver):
//
//   - FromCRD reads a CRD of the current run (Strategic = false);
//   - ParseOpenAPIV3 reads a server document; (*Document).Kind gives the
//     strategic-merge-patch reading of a built-in kind (lists by
//     x-kubernetes-patch-strategy, as the server will patch it), and
//     (*Document).CustomKind the list-type reading of a custom resource;
//   - ApplyOverrides lays user-declared merge keys (ParseMergeKey,
//     LoadMergeKeysFile; docs/merge-keys.md) over custom resources.
//
// Graphs are shared and may be cyclic: read them along an object, never
// change them.
package schema
