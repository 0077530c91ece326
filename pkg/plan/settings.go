package plan

// Settings are what a plan's writes are made with, decided when the plan
// is made and kept with it (and in its file), so that executing it needs
// only the plan and the files' objects: a caller cannot execute a plan
// under another field manager or namespace than the one it was checked
// with.
type Settings struct {
	// FieldManager is the manager the writes are recorded under; empty
	// means kubectl's for each kind of write (kubectl-client-side-apply
	// for creates and patches, kubectl for server-side applies).
	FieldManager string
	// ServerSide: the objects are written by server-side apply;
	// ForceConflicts takes fields other managers own.
	ServerSide     bool
	ForceConflicts bool
	// FieldValidation is the server's fieldValidation for the writes
	// (Strict, Warn or Ignore); empty leaves it to the server.
	FieldValidation string
	// Namespace is the one given to namespaced objects that named none.
	Namespace string
	// ApplySet is the parent reference the plan's members belong to (its
	// prune items come from it); empty: none.
	ApplySet string
	// PlainSecretRecord: Secrets' last-applied records keep their values
	// (kubectl's way) instead of digests.
	PlainSecretRecord bool
	// RollbackTo, when not 0, is the revision of ApplySet the plan brings
	// the set back to (Applier.Rollback): its items are planned from that
	// revision's members, which Execute reads again from the set's history
	// to check them, with only the Secrets' values from the caller.
	RollbackTo int
}
