// Package merge computes what `kapply apply` does to one object: the pure
// three-way merge of the last-applied configuration, the file and the live
// object under a schema, yielding the merged object, the patch that turns the
// live object into it, and an explanation of every change.
//
// For built-in kinds the result is, field for field, what kubectl's
// CreateThreeWayMergePatch followed by the server's strategic merge would
// produce, and the patch is a strategic merge patch. Where kubectl cannot
// compute one (a map of lists such as a CertificateSigningRequest's
// spec.extra, or a RawExtension), maps merge key by key and the patch
// replaces the map whole, under resourceVersion. For custom resources the
// patch is a JSON merge patch; because a merge patch cannot merge lists, a
// list it changes is sent whole together with metadata.resourceVersion, so a
// concurrent writer yields a conflict and a re-plan instead of a lost update.
//
// The package does no I/O and never talks to a cluster.
package merge
