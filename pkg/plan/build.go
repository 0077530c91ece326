package plan

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/merge"
	"github.com/kapply/kapply/pkg/secretmask"
)

// The constructors below are what the Applier calls as it plans each
// object, so that planning, diff and a saved plan build items one way.

// Owners answers which field managers own a field of the live object now;
// pkg/ownership's *Ownership is one. A nil Owners knows nobody.
type Owners interface {
	Of(path fieldpath.Path) []string
}

// IDOf is obj's identity.
func IDOf(obj *unstructured.Unstructured) ID {
	gv, err := schema.ParseGroupVersion(obj.GetAPIVersion())
	if err != nil {
		// An apiVersion with several slashes: keep it whole as the
		// version, so the identity still says what the file said.
		gv = schema.GroupVersion{Version: obj.GetAPIVersion()}
	}
	return ID{Group: gv.Group, Version: gv.Version, Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// FromMerge is the item of an object that exists: a patch with mp's body
// against live, or Unchanged when mp is empty. file is the object as the
// run sends it (its record attached); owners may be nil.
func FromMerge(file, live *unstructured.Unstructured, src Source, mp *merge.Result, owners Owners) Item {
	it := existing(Update, file, live, src)
	if mp.Empty() {
		it.Action = Unchanged
	} else {
		it.Patch = Patch{Type: PatchTypeOf(mp.Patch.Type), Data: mp.Patch.Data}
	}
	it.Merged = mp.Merged
	it.Changes = ChangesOf(mp.Changes, owners)
	it.Replaced = replacedOf(mp.Whole, it.Changes, objectOf(live))
	for _, w := range mp.Warnings {
		it.Warnings = append(it.Warnings, w.String())
	}
	// The engine's warnings name paths; masking is for those that quote.
	it.Warnings = maskWarningsIn(it.Warnings, objectOf(file), objectOf(live))
	return it
}

// replacedOf records live's value at each path a patch replaces whole,
// but where a change Verify checks holds the same path: its Old is that
// value already, and a plan records no value twice.
func replacedOf(whole []fieldpath.Path, changes []Change, live map[string]any) []Replaced {
	if len(whole) == 0 {
		return nil
	}
	checked := make(map[string]bool, len(changes))
	for _, c := range changes {
		if checkedByVerify(c) {
			checked[c.Path.String()] = true
		}
	}
	var out []Replaced
	for _, p := range whole {
		if checked[p.String()] {
			continue
		}
		v, err := p.Lookup(live)
		if err != nil {
			v = nil // live has none there (or no single element: refused then)
		}
		out = append(out, Replaced{Path: p, Live: runtime.DeepCopyJSONValue(v)})
	}
	return out
}

// NewCreate is the item that creates obj, the object as sent (its record
// attached).
func NewCreate(obj *unstructured.Unstructured, src Source) Item {
	return Item{Action: Create, ID: IDOf(obj), Source: src, Merged: obj.Object}
}

// NewServerSide is the item of a server-side apply of body (the apply
// configuration sent); live is nil when the object does not exist yet.
func NewServerSide(body, live *unstructured.Unstructured, src Source) (Item, error) {
	data, err := json.Marshal(body.Object)
	if err != nil {
		return Item{}, fmt.Errorf("encoding the apply body of %s: %w", IDOf(body), err)
	}
	it := existing(Apply, body, live, src)
	it.Patch = Patch{Type: ApplyPatch, Data: data}
	return it, nil
}

// NewRemoval is the prune or delete item of live.
func NewRemoval(action Action, live *unstructured.Unstructured, src Source) Item {
	return existing(action, live, live, src)
}

// existing is an item of obj carrying live's UID, resourceVersion and
// record digest (none when live is nil).
func existing(action Action, obj, live *unstructured.Unstructured, src Source) Item {
	it := Item{Action: action, ID: IDOf(obj), Source: src}
	if live != nil {
		it.UID, it.ResourceVersion = string(live.GetUID()), live.GetResourceVersion()
		it.LastApplied = recordDigest(live, lastapplied.DigestKey{})
	}
	return it
}

// KeyedBy returns a Secret item planned against live (nil: absent) with
// the digest key of its namespace, its record digest made under it. Items
// of other kinds are returned as they are.
func (it Item) KeyedBy(k lastapplied.DigestKey, live *unstructured.Unstructured) Item {
	if !it.ID.isSecret() {
		return it
	}
	it.DigestKey, it.DigestKeyID = k, k.ID()
	if live != nil && it.Action != Prune && it.Action != Delete {
		it.LastApplied = recordDigest(live, k)
	}
	return it
}

// ChangesOf converts the engine's changes, adding each field's owners.
func ChangesOf(changes []merge.Change, owners Owners) []Change {
	if len(changes) == 0 {
		return nil
	}
	out := make([]Change, len(changes))
	for i, c := range changes {
		out[i] = Change{Path: c.Path, Old: c.Old, New: c.New, Reason: ReasonOf(c.Reason)}
		if owners != nil {
			out[i].Owners = owners.Of(c.Path)
		}
	}
	return out
}

var fromMergeReason = map[merge.Reason]Reason{
	merge.SetByFile: SetByFile, merge.RemovedFromFile: RemovedFromFile,
	merge.KeptUnmanaged: KeptUnmanaged, merge.ClearedWithParent: ClearedWithParent,
}

// ReasonOf is the plan's word for the engine's reason.
func ReasonOf(r merge.Reason) Reason {
	if out, ok := fromMergeReason[r]; ok {
		return out
	}
	return SetByFile
}

// Explain prints the reason as `kapply diff --explain` does (merge's text).
func (r Reason) Explain() string {
	for m, p := range fromMergeReason {
		if p == r {
			return m.String()
		}
	}
	return string(r)
}

// objectOf is obj's content, nil for nil.
func objectOf(obj *unstructured.Unstructured) map[string]any {
	if obj == nil {
		return nil
	}
	return obj.Object
}

// recordAnnotations are the annotations that hold a last-applied record.
var recordAnnotations = []string{lastapplied.Annotation, lastapplied.CompactAnnotation}

// recordDigest is a digest of live's last-applied records ("" when it has
// none). The UID salts it. A Secret's record may hold its values
// (kubectl's plain records): its digest is keyed by k, the namespace's
// digest key, so that whoever holds the plan file alone has nothing to
// test a guessed value against; without a key it has none ("").
func recordDigest(live *unstructured.Unstructured, k lastapplied.DigestKey) string {
	annotations := live.GetAnnotations()
	var b bytes.Buffer
	found := false
	b.WriteString(string(live.GetUID()))
	for _, key := range recordAnnotations {
		text, ok := annotations[key]
		found = found || ok
		fmt.Fprintf(&b, "\x00%s\x00%t\x00%d\x00%s", key, ok, len(text), text)
	}
	switch {
	case !found:
		return ""
	case secretmask.IsSecret(live.Object) && k.IsZero():
		return ""
	case secretmask.IsSecret(live.Object):
		return k.Sum("kapply.dev/plan-record", b.Bytes())
	}
	sum := sha256.Sum256(b.Bytes())
	return "sha256:" + hex.EncodeToString(sum[:])
}
