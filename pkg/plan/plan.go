package plan

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/shown"
)

// Plan is what one run does to one cluster: an item per object, in the
// order the run writes them.
type Plan struct {
	Cluster Cluster
	// Settings are what the items are written with.
	Settings Settings
	Items    []Item
	// Gates are what each wave of the items waits for before it is sent
	// (Gates[w] for the items of Wave w; see Order). Nil: one wave, no
	// gate (a run that declares no order).
	Gates []Gate
	// Warnings are about what has no item, such as a Namespace pruning
	// leaves alone on purpose; for people, not saved.
	Warnings []string
}

// Cluster names the cluster a plan was made against. A saved plan runs only
// where Server and ID match; Context and User are for people (a laptop and
// CI name the same cluster differently).
type Cluster struct {
	Server  string
	Context string
	User    string
	// ID tells one cluster from another behind the same URL, e.g. the UID
	// of the kube-system Namespace (a cluster rebuilt at the same address
	// gets a new one).
	ID string
}

// ErrOtherCluster: a plan made against one cluster is executed against
// another.
var ErrOtherCluster = errors.New("the plan was made for another cluster")

// SameAs checks that now, the cluster a run talks to, is the one the plan
// was made for: the same server URL and identity. Context and user names
// may differ (a laptop's and CI's kubeconfigs). A plan without an ID
// matches on the server alone.
func (c Cluster) SameAs(now Cluster) error {
	switch {
	case c.Server != now.Server:
		return fmt.Errorf("%w: it names server %s, this run talks to %s", ErrOtherCluster, c.Server, now.Server)
	case c.ID != "" && c.ID != now.ID:
		return fmt.Errorf("%w: server %s is now cluster %q, the plan's was %q (rebuilt at the same address?)", ErrOtherCluster, c.Server, now.ID, c.ID)
	}
	return nil
}

// Item is what happens to one object and why.
type Item struct {
	Action Action
	ID     ID
	Source Source
	// UID and ResourceVersion are the live object's when the plan was made
	// (empty for a create): executing the item requires them still, so a
	// plan approved earlier cannot overwrite a change made since.
	UID             string
	ResourceVersion string
	// LastApplied is a digest of the live object's last-applied records
	// when the plan was made (see recordDigest): the three-way merge read
	// them, so a record changed since makes the plan stale. A Secret's is
	// keyed by DigestKey (a record may hold its values).
	LastApplied string
	// DigestKey is the digest key of a Secret item's namespace, which its
	// digests (LastApplied, and its values' in an encoded plan) are made
	// and checked under. Never encoded: a decoded plan's Secret items get
	// it from the cluster before they are verified. DigestKeyID names it
	// in the plan file.
	DigestKey   lastapplied.DigestKey
	DigestKeyID string
	// Patch is the request body of a patch or apply item; empty otherwise.
	Patch Patch
	// Subresource, for an apply item, sends the patch to this subresource
	// of the object ("status") instead of the object itself: the file as
	// it is, without last-applied record or ownership upgrade.
	Subresource string
	// ShareRecord, for an apply item under kubectl's field manager, keeps
	// the object's last-applied record as kubectl --server-side does:
	// owned by kubectl-last-applied, written by a request of its own when
	// the server does not rewrite it (the patch carries none).
	ShareRecord bool
	// Merged is the object the plan expects after the write; for a create,
	// the object sent. A decoded plan holds it only for a create and a
	// Secret (see onWire): Execute plans the others again from the files.
	Merged map[string]any
	// MergedLabels are Merged's labels where a decoded plan holds no
	// Merged (a patch, unchanged or apply item of a saved plan): what
	// Labels answers for it.
	MergedLabels map[string]string
	// Changes explain every field that differs between live and Merged
	// (a decoded plan's: those that change; no kept-unmanaged ones).
	Changes  []Change
	Warnings []string
	// DryRunResult is the server's answer to a dry run of the write, when
	// one was asked for.
	DryRunResult map[string]any
	// ChangesKnown, for a server-side apply item, says its Changes are the
	// whole answer (the server's dry run, or the apply computed locally):
	// no change then means the apply changes nothing, and Verify checks
	// the item by its changes when its object moved since.
	ChangesKnown bool
	// KeptLive are the fields a server-side apply body carries at their
	// live values because ignore rules keep them as they are live (kapply
	// plan with rules): Verify refuses the item when one of them moved
	// live since, rather than write the old value back. A patch item
	// lists them too, but its patch does not write them, so a move is
	// tolerated; a Secret's kept keys tell apply --plan -f which of the
	// file's values the plan did not take (WithKeptSecretValues).
	KeptLive []fieldpath.Path
	// Replaced are the lists and maps a patch item's patch replaces whole
	// rather than merges into (merge.Result.Whole), each with the live value
	// the plan was made against, except where a change already names that
	// value whole. The patch would drop what another writer added there
	// since (an element of a custom resource's keyed list, a field of a
	// retainKeys map), and the changes name only what the file changes:
	// Verify refuses the item when one of these moved.
	Replaced []Replaced
	// Wave is the step of the run the item is sent in (Plan.Gates), and
	// WaveReason why it is there: its sync-wave, what it depends on, the
	// webhook it waits for.
	Wave       int
	WaveReason string
	// Verdicts are the cluster's admission policies' verdicts on the
	// item, when the plan was checked (kapply --check).
	Verdicts []Verdict
}

// Replaced is a value a patch replaces whole and the live value it was
// made against (nil: live had none).
type Replaced struct {
	Path fieldpath.Path
	Live any
}

// Action is what an item does to its object.
type Action string

const (
	Create Action = "create"
	// Update patches the object (spelled "patch" in a document; the Go
	// name Patch is the body's type).
	Update    Action = "patch"
	Unchanged Action = "unchanged"
	// Apply is a server-side apply: the server merges.
	Apply  Action = "apply"
	Prune  Action = "prune"
	Delete Action = "delete"
)

var actions = []Action{Create, Update, Unchanged, Apply, Prune, Delete}

// ID is an object's identity: its kind's group, version and name, its
// namespace (empty when cluster-scoped) and name.
type ID struct {
	Group     string `json:"group,omitempty"`
	Version   string `json:"version"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// String names the object as kapply's messages do: kind[.group]/name,
// with " -n namespace" when namespaced; each part that came from a file
// quoted when it holds a character that does not show as itself
// (shown.Text).
func (id ID) String() string {
	kind := id.Kind
	if id.Group != "" {
		kind += "." + id.Group
	}
	if id.Namespace == "" {
		return shown.Text(kind) + "/" + shown.Text(id.Name)
	}
	return fmt.Sprintf("%s/%s -n %s", shown.Text(kind), shown.Text(id.Name), shown.Text(id.Namespace))
}

// isSecret reports a core v1 Secret, whose values a plan keeps as digests.
func (id ID) isSecret() bool { return id.Group == "" && id.Version == "v1" && id.Kind == "Secret" }

// Patch is a request body and how the server reads it.
type Patch struct {
	Type PatchType
	Data []byte
}

// PatchType names a patch type in a plan document; PatchTypeOf and
// K8s convert to and from the server's content types.
type PatchType string

const (
	StrategicPatch PatchType = "strategic"
	MergePatch     PatchType = "merge"
	JSONPatch      PatchType = "json"
	ApplyPatch     PatchType = "apply"
)

var patchTypes = map[PatchType]types.PatchType{
	StrategicPatch: types.StrategicMergePatchType,
	MergePatch:     types.MergePatchType,
	JSONPatch:      types.JSONPatchType,
	ApplyPatch:     types.ApplyYAMLPatchType,
}

// PatchTypeOf is the plan's name of the server's patch type t ("" when
// it has none).
func PatchTypeOf(t types.PatchType) PatchType {
	for name, k8s := range patchTypes {
		if k8s == t || (name == ApplyPatch && t == types.ApplyCBORPatchType) {
			return name
		}
	}
	return ""
}

// K8s is the content type the server reads the patch as.
func (t PatchType) K8s() types.PatchType { return patchTypes[t] }

// Change is one explained difference, as merge.Change with who owns the
// field now. Old is nil when live lacks the field, New when Merged does.
type Change struct {
	Path   fieldpath.Path
	Old    any
	New    any
	Reason Reason
	// Owners are the field managers that own the field on the live
	// object (managedFields); a change to a field another manager owns
	// takes it from them.
	Owners []string
}

// Reason says why a field changes. It is a word, not merge.Reason's
// number, so a saved plan reads the same after the engine's enum grows.
type Reason string

const (
	SetByFile         Reason = "set-by-file"
	RemovedFromFile   Reason = "removed-from-file"
	KeptUnmanaged     Reason = "kept-unmanaged"
	ClearedWithParent Reason = "cleared-with-parent"
)

var reasons = []Reason{SetByFile, RemovedFromFile, KeptUnmanaged, ClearedWithParent}
