// Package prune decides what a run of apply deletes that its files no
// longer declare, in either of kubectl's two forms: the members of an
// ApplySet (KEP-3659), tracked by a parent object, or (the older form)
// the objects matching a label selector, of an allowlist of kinds, that
// carry a last-applied record. It reads and writes nothing itself: the
// caller (pkg/apply) lists the live objects, deletes what Select returns
// and writes the parent ParentPatch gives; this package is the rules.
package prune
