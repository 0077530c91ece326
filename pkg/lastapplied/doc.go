// Package lastapplied reads and writes the last-applied record that kubectl
// keeps on every object it applies — the annotation
// kubectl.kubernetes.io/last-applied-configuration — byte for byte as kubectl
// does, so kubectl and kapply can take turns on the same objects — except a
// Secret's values, which the record keeps as salted digests by default
// (RedactSecrets): the record serves only to find deletions, for which keys
// are enough.
package lastapplied
