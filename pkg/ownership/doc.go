// Package ownership says who owns what on a live object and moves fields
// between imperative writers and the declarative record: the owners of a
// field by managedFields (structured-merge-diff), the drift of an applied
// object from its record (FindDrift, for `kapply status`), adopting an
// object created imperatively (Adopt) and releasing fields of the record
// to whoever writes them (Release), and moving field ownership between
// client-side and server-side apply (ToServerSide, ToClientSide, RecordOf).
// The record itself is pkg/lastapplied's.
package ownership
