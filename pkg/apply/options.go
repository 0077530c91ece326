package apply

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kapply/kapply/pkg/schema"
)

// DryRun says whether and where a run only pretends to write.
type DryRun int

const (
	// NoDryRun writes to the cluster.
	NoDryRun DryRun = iota
	// ClientDryRun computes every plan locally and sends no write.
	ClientDryRun
	// ServerDryRun sends every write with dryRun=All, so admission and
	// defaulting show, and nothing is persisted.
	ServerDryRun
)

// Options configure one run of apply.
type Options struct {
	Files Files
	// Selector keeps only the objects whose labels match (kubectl's -l).
	Selector string
	// Namespace is given to namespaced objects that name none.
	Namespace string
	// EnforceNamespace makes an object in another namespace an error, as
	// kubectl does when -n is given.
	EnforceNamespace bool
	// FieldManager is recorded in managedFields for kapply's writes.
	FieldManager string
	// Timeout bounds the wait for CRDs of the run to become established.
	Timeout time.Duration
	// MergeKeys are user-declared keys for lists the schemas leave atomic.
	MergeKeys []schema.Override
	// Parallel bounds how many objects are applied at once (default 16).
	Parallel int
	DryRun   DryRun
	// Progress, when set, is called after each object with the number of
	// objects done and the total.
	Progress func(done, total int)
	// Backoff spaces the attempts at requests an unavailable server did not
	// take; zero means DefaultBackoff.
	Backoff wait.Backoff

	// Prune deletes what the files no longer declare: members of ApplySet
	// when it is set, else (kubectl's older form) objects matching Selector
	// of the kinds in PruneAllowlist.
	Prune bool
	// ApplySet is the parent reference [RESOURCE[.GROUP]/]NAME (KEP-3659).
	ApplySet string
	// PruneAllowlist lists group/version/kind entries for selector pruning.
	PruneAllowlist []string
	// PruneAllowEmpty lets a run with no objects prune every member.
	PruneAllowEmpty bool
	// Cascade is the propagation policy of deletions.
	Cascade metav1.DeletionPropagation
	// WaitDeleted makes each deletion wait, bounded by Timeout, until the
	// object is gone; IgnoreNotFound counts a missing object as deleted.
	WaitDeleted    bool
	IgnoreNotFound bool

	// ServerSide sends each object as a server-side apply patch under
	// FieldManager; ForceConflicts takes fields other managers own.
	ServerSide     bool
	ForceConflicts bool
}

const (
	// DefaultFieldManager is the field manager kapply's writes are recorded under.
	DefaultFieldManager = "kapply"
	// DefaultParallel is how many objects a run applies at once.
	DefaultParallel = 16
)

func (o Options) withDefaults() Options {
	if o.FieldManager == "" {
		o.FieldManager = DefaultFieldManager
	}
	if o.Parallel < 1 {
		o.Parallel = DefaultParallel
	}
	if o.Timeout <= 0 {
		o.Timeout = time.Minute
	}
	if o.Backoff.Steps == 0 {
		o.Backoff = DefaultBackoff
	}
	return o
}
