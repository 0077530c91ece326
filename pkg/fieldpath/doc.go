// Package fieldpath is the one way kapply names a field of an object and the
// one way it compares values. The engine builds paths as it merges
// (spec.template.spec.containers[name=web].image), diff --explain and status
// print them, and release parses them back from the command line: one type,
// one printer, one parser, so what one command prints another accepts.
// Equal is deep equality of decoded JSON that compares integers exactly
// (float64 loses them past 2^53) and numbers of any Go type by value.
// CompareObjects is the one comparison of two objects (plan changes,
// ignore classes, diff counts and events), and ServerMetadata the one
// list of the metadata fields the server writes.
package fieldpath
