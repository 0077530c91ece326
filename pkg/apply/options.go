package apply

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/apply/prune"
	"github.com/kapply/kapply/pkg/cluster"
	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/plan"
)

// WriteOptions say what the run's objects are written as: read alike by
// Plan (which computes the writes) and Apply (which sends them).
type WriteOptions struct {
	// Namespace is given to namespaced objects that name none; empty
	// means "default", as kubectl without -n and a context namespace.
	Namespace string
	// EnforceNamespace makes an object in another namespace an error, as
	// kubectl does when -n is given.
	EnforceNamespace bool
	// FieldManager is recorded in managedFields for the run's writes; empty
	// means kubectl's: ClientSideFieldManager, or ServerSideFieldManager
	// with ServerSide.
	FieldManager string
	// FieldValidation is the server's fieldValidation for creates and
	// patches: metav1.FieldValidationStrict, Warn or Ignore; empty leaves it
	// to the server (Warn), as kubectl diff does.
	FieldValidation string
	// ServerSide sends each object as a server-side apply patch under
	// FieldManager; ForceConflicts takes fields other managers own.
	ServerSide     bool
	ForceConflicts bool
	// Subresource, with ServerSide, sends the apply patch to this
	// subresource ("status") instead of the object (kubectl's --subresource).
	Subresource string
	// NoOverwrite (kubectl's --overwrite=false) refuses an object whose
	// patch would change a field someone else changed since the last apply
	// (see merge.Result.Conflicts), instead of taking the file's value.
	NoOverwrite bool
	// SecretRecord says how a Secret's values are kept in its last-applied
	// record: redacted (the zero value) or plain, as kubectl keeps them.
	SecretRecord lastapplied.SecretRecord
}

// ForceOptions are kubectl apply --force's: an object whose patch the
// server refuses as invalid (an immutable field) or keeps conflicting on
// is deleted with GracePeriod and Cascade, awaited until gone for at most
// the run's Timeout, and created from the file. Before deleting, the
// server's dry run of the create must admit the file's object, and the
// original is saved to a file in BackupDir, removed once an object exists
// again.
type ForceOptions struct {
	// GracePeriod is the deletion's grace period in seconds; negative: the
	// object's own.
	GracePeriod int
	// Cascade is the propagation policy of the deletion.
	Cascade metav1.DeletionPropagation
	// BackupDir is where an object is saved before it is deleted; empty:
	// kapply/force-backups in the user's cache directory.
	BackupDir string
	// OnBackup, when set, is given the path of each saved object before
	// it is deleted, from concurrent goroutines. The file holds the object's
	// values (a Secret's data): print its path, never its content.
	OnBackup func(obj *unstructured.Unstructured, src plan.Source, path string)
}

// Options configure one run of Apply.
type Options struct {
	Write WriteOptions
	// Prune, when set, deletes what the files no longer declare.
	Prune *prune.Options
	// Force, when set, replaces objects that cannot be patched
	// (kubectl apply --force).
	Force  *ForceOptions
	DryRun cluster.DryRun
	// Timeout bounds the wait for CRDs of the run to become established,
	// and Force's wait for an object to be gone; and the gates of all the
	// run's waves together (zero: DefaultGateTimeout).
	Timeout time.Duration
	// Waves are how the run's waves wait (docs/waves.md).
	Waves WaveOptions
	// Progress, when set, is called after each object with the number of
	// objects done and the total.
	Progress func(done, total int)
	// OnEvent, when set, is given each object's event as soon as it is
	// final, with the object's place in the input (the place of its event
	// in Run's result), from concurrent goroutines. Events of files that
	// could not be loaded and of pruning come only in Run's result.
	OnEvent func(index int, ev Event)
	// Lean is for callers that take each object's event in OnEvent and
	// need of the events Apply returns only what happened: once OnEvent has
	// an event, the run keeps it without its Plan, and with Live and Result
	// cut to what identifies the object (apiVersion, kind, name, namespace,
	// uid) — unless it failed or has warnings, which may need the objects to
	// mask Secret values in. A run of 10,000 objects then holds the objects
	// in flight, not every object three times over.
	Lean bool
	// NoManagedFields drops metadata.managedFields from the live objects
	// read by LIST (at 10,000 objects, half of what they weigh) for callers
	// that neither show them nor read owners from them; server-side apply,
	// which upgrades client-side owners, reads them anyway.
	NoManagedFields bool
	// ChunkSize is the number of objects each LIST asks for per page
	// (limit, then continue); 0 means cluster.DefaultChunkSize, kubectl's
	// 500, and a negative size lists in one answer.
	ChunkSize int64
	// FileFromLive, when set, rewrites each object that exists before it
	// is planned, given its live object (apply --respect-ignore copies the
	// live values of ignored fields into the file); from concurrent
	// goroutines.
	FileFromLive func(file, live *unstructured.Unstructured) (*unstructured.Unstructured, error)
}

// settings are what a run reads, whichever operation started it: the
// operation's own options (Options, PlanOptions, ExecuteOptions,
// delete.Options) and the Applier's (parallel). Apply's Options hold the
// most, so they are embedded whole, with their Write moved to the embedded
// WriteOptions (left empty in Options) so the run reads one copy.
type settings struct {
	WriteOptions
	Options
	Cascade metav1.DeletionPropagation
	// localServerSide computes each apply item's result locally
	// (PlanOptions.LocalServerSide, or Apply's client dry run of ServerSide).
	localServerSide bool
	// Parallel is the Applier's (Clients.Parallel).
	Parallel int
}

// settings are the run's settings for Apply.
func (o Options) settings() settings {
	s := settings{WriteOptions: o.Write, Options: o, localServerSide: o.Write.ServerSide && o.DryRun == cluster.ClientDryRun}
	s.Options.Write = WriteOptions{}
	if o.Prune != nil {
		s.Cascade = o.Prune.Cascade
	}
	return s
}

// Field managers. apply writes under kubectl's names, so kapply and kubectl
// take turns on the same objects as one manager: kubectl apply
// --server-side upgrades kapply's client-side fields, and the reverse.
const (
	// ClientSideFieldManager is kubectl's manager for client-side apply.
	ClientSideFieldManager = "kubectl-client-side-apply"
	// ServerSideFieldManager is kubectl's manager for server-side apply.
	ServerSideFieldManager = "kubectl"
	// LegacyFieldManager is the manager kapply wrote under before it took
	// kubectl's names; server-side apply upgrades its fields as
	// client-side ones.
	LegacyFieldManager = "kapply"
)

// DefaultParallel is how many objects a run applies at once.
const DefaultParallel = 16

// chunkSize is the page size of the run's LISTs for cluster.EachItem.
func (o settings) chunkSize() int64 {
	if o.ChunkSize == 0 {
		return cluster.DefaultChunkSize
	}
	return max(o.ChunkSize, 0)
}

func (o settings) withDefaults() settings {
	switch {
	case o.FieldManager != "":
	case o.ServerSide:
		o.FieldManager = ServerSideFieldManager
	default:
		o.FieldManager = ClientSideFieldManager
	}
	if o.Namespace == "" {
		// A namespaced object built in code without one was sent to the
		// cluster-wide URL: "the server does not allow this method".
		o.Namespace = metav1.NamespaceDefault
	}
	if o.Parallel < 1 {
		o.Parallel = DefaultParallel
	}
	if o.Timeout <= 0 {
		o.Timeout = time.Minute
	}
	return o
}

// WaveOptions say how a run's waves wait, beyond Options.Timeout.
type WaveOptions struct {
	// Health, when set, decides the readiness of the kinds it knows in
	// place of kstatus, for the gates of the run's waves (see pkg/health).
	Health HealthFunc
	// WaitPruned, with pruning, waits for the pruned objects of each wave
	// to be gone before those of the wave before it (apply --prune
	// --wait), within Options.Timeout.
	WaitPruned bool
}
