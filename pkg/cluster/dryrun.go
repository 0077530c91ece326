package cluster

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// DryRun says whether and where a run only pretends to write. It is
// defined here, in the one way to the server, because both the Applier
// (pkg/apply) and the packages it builds on that shape write requests
// (pkg/delete's DELETE options and Options) read it: in pkg/apply, which
// imports pkg/delete, pkg/delete could not name it without an import cycle.
type DryRun int

const (
	// NoDryRun writes to the cluster.
	NoDryRun DryRun = iota
	// ClientDryRun computes every write locally and sends none; with
	// server-side apply, each apply is computed locally (see pkg/apply's
	// LocalServerSideNote).
	ClientDryRun
	// ServerDryRun sends every write with dryRun=All, so admission and
	// defaulting show, and nothing is persisted.
	ServerDryRun
)

// Param is the dryRun parameter of a write request under d: [All] for a
// server dry run, none otherwise (a client dry run sends no write).
func (d DryRun) Param() []string {
	if d == ServerDryRun {
		return []string{metav1.DryRunAll}
	}
	return nil
}
