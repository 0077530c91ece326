// Package lastapplied reads and writes the last-applied record that kubectl
// keeps on every object it applies — the annotation
// kubectl.kubernetes.io/last-applied-configuration — byte for byte as kubectl
// does, so kubectl and kapply can take turns on the same objects; compacts
// it into kapply.dev/last-applied-compact past the annotation limit; keeps
// a Secret's values as salted digests by default (RedactSecrets: the record
// serves only to find deletions, for which keys are enough); and views,
// sets and edits it. Who owns which field is pkg/ownership's.
package lastapplied
