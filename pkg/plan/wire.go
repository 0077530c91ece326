package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/kapply/kapply/pkg/fieldpath"
)

// The document's shape. Plan and Item carry no JSON tags: the wire form
// is its own set of types, so the Go API can change without changing
// what saved plans mean, and each field's spelling is decided here.
//
// A document is written and read member by member (see encode.go):
//
//	{"apiVersion":"kapply.dev/v1alpha2","kind":"Plan","cluster":{...},"settings":{...},"items":[
//	{"action":"patch","id":{...},...},
//	...
//	],"checksum":"sha256:..."}
//
// one item a line, compact, so a plan streams in and out item by item and
// a reviewer reads it with jq or grep.

// Every object of the wire form has its fields in the order of their
// names, as encoding/json writes a map's, so that the compact bytes the
// checksum covers are the same after a reviewer's tool sorts keys or
// reindents (jq -S, a decode into a map and back).

// settingsJSON is Settings; every field optional (the zero value is
// kubectl's way).
type settingsJSON struct {
	ApplySet          string `json:"applySet,omitempty"`
	FieldManager      string `json:"fieldManager,omitempty"`
	FieldValidation   string `json:"fieldValidation,omitempty"`
	ForceConflicts    bool   `json:"forceConflicts,omitempty"`
	Namespace         string `json:"namespace,omitempty"`
	PlainSecretRecord bool   `json:"plainSecretRecord,omitempty"`
	RollbackTo        int    `json:"rollbackTo,omitempty"`
	ServerSide        bool   `json:"serverSide,omitempty"`
}

func settingsToWire(s Settings) settingsJSON {
	return settingsJSON{ApplySet: s.ApplySet, FieldManager: s.FieldManager, FieldValidation: s.FieldValidation,
		ForceConflicts: s.ForceConflicts, Namespace: s.Namespace, PlainSecretRecord: s.PlainSecretRecord, RollbackTo: s.RollbackTo, ServerSide: s.ServerSide}
}

func (s settingsJSON) settings() Settings {
	return Settings{ApplySet: s.ApplySet, FieldManager: s.FieldManager, FieldValidation: s.FieldValidation,
		ForceConflicts: s.ForceConflicts, Namespace: s.Namespace, PlainSecretRecord: s.PlainSecretRecord, RollbackTo: s.RollbackTo, ServerSide: s.ServerSide}
}

type clusterJSON struct {
	Context string `json:"context,omitempty"`
	ID      string `json:"id,omitempty"`
	Server  string `json:"server"`
	User    string `json:"user,omitempty"`
}

type idJSON struct {
	Group     string `json:"group,omitempty"`
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	Version   string `json:"version"`
}

func (id idJSON) id() ID {
	return ID{Group: id.Group, Version: id.Version, Kind: id.Kind, Namespace: id.Namespace, Name: id.Name}
}

// itemJSON is an item as onWire keeps it. Paths are fieldpath text
// (Path.Text), which keeps typed key values and positions.
type itemJSON struct {
	Action          Action            `json:"action"`
	Changes         []changeJSON      `json:"changes,omitempty"`
	ChangesKnown    bool              `json:"changesKnown,omitempty"`
	DigestKeyID     string            `json:"digestKey,omitempty"`
	DryRunResult    map[string]any    `json:"dryRunResult,omitempty"`
	ID              idJSON            `json:"id"`
	KeptLive        []string          `json:"keptLive,omitempty"`
	Labels          map[string]string `json:"labels,omitempty"`
	LastApplied     string            `json:"lastApplied,omitempty"`
	Merged          map[string]any    `json:"merged,omitempty"`
	Patch           *patchJSON        `json:"patch,omitempty"`
	Replaced        []replacedJSON    `json:"replaced,omitempty"`
	ResourceVersion string            `json:"resourceVersion,omitempty"`
	ShareRecord     bool              `json:"shareRecord,omitempty"`
	Source          Source            `json:"source,omitzero"`
	Subresource     string            `json:"subresource,omitempty"`
	UID             string            `json:"uid,omitempty"`
	Verdicts        []Verdict         `json:"verdicts,omitempty"`
	Warnings        []string          `json:"warnings,omitempty"`
	Wave            int               `json:"wave,omitempty"`
	WaveReason      string            `json:"waveReason,omitempty"`
}

// replacedJSON is a value the patch replaces whole: its path, and the live
// value (absent: live had none).
type replacedJSON struct {
	Live any    `json:"live,omitempty"`
	Path string `json:"path"`
}

// patchJSON holds the body as JSON, not base64: a reviewer reads it.
type patchJSON struct {
	Data json.RawMessage `json:"data"`
	Type PatchType       `json:"type"`
}

type changeJSON struct {
	New    any      `json:"new,omitempty"`
	Old    any      `json:"old,omitempty"`
	Owners []string `json:"owners,omitempty"`
	Path   string   `json:"path"`
	Reason Reason   `json:"reason"`
}

// onWire is what a saved plan keeps of it, a planned item; a decoded plan
// is made of such items, and onWire(decoded) is decoded. Dropped:
//   - kept-unmanaged changes (Old == New: a live-only field that stays);
//     every reader of changes skips them, and they listed every kept
//     field (the whole managedFields) of every object.
//   - the change of the last-applied record: its old text is checked by
//     the item's digest (LastApplied), its new one is in the patch; both
//     whole, it was half of the file on hack/bench's objects.
//   - Merged, but for a create (the object it sends, compared with the
//     files' by apply --plan) and a Secret (its values' digests, which
//     restoring and verifying read): apply --plan plans every other item
//     again from the files and compares patches. Its labels stay
//     (MergedLabels), for the ApplySet membership apply --plan checks.
//   - what the server sets in a stored object's metadata (managedFields,
//     creationTimestamp, generation, uid, resourceVersion: the item's
//     own fields), but in a create's object, which is sent as it is.
//
// Saved is the item as a saved plan holds it (see onWire): what a run
// that saves its plan need keep of each item once it is planned.
func Saved(it Item) Item { return onWire(it) }

func onWire(it Item) Item {
	if it.Changes != nil {
		changes := make([]Change, 0, len(it.Changes))
		for _, c := range it.Changes {
			if c.Reason != KeptUnmanaged && !c.Path.Equals(recordPath) {
				changes = append(changes, c)
			}
		}
		if len(changes) == 0 {
			changes = nil
		}
		it.Changes = changes
	}
	switch {
	case it.Merged == nil || it.Action == Create:
	case it.ID.isSecret():
		it.Merged = withoutServerMetadata(it.Merged)
	default:
		it.MergedLabels, it.Merged = labelsOf(it.Merged), nil
	}
	if it.DryRunResult != nil {
		it.DryRunResult = withoutServerMetadata(it.DryRunResult)
	}
	return it
}

// serverMetadata are the metadata fields the server sets that no reader
// of a saved plan needs.
var serverMetadata = fieldpath.ServerMetadata(fieldpath.EveryWrite | fieldpath.OnCreate)

// withoutServerMetadata is obj without serverMetadata; obj is not
// modified (only its top and metadata maps are copied).
func withoutServerMetadata(obj map[string]any) map[string]any {
	metadata, ok := obj["metadata"].(map[string]any)
	if !ok {
		return obj
	}
	trimmed := maps.Clone(metadata)
	for _, f := range serverMetadata {
		delete(trimmed, f)
	}
	out := maps.Clone(obj)
	out["metadata"] = trimmed
	return out
}

func itemToWire(it Item) itemJSON {
	id := it.ID
	out := itemJSON{Action: it.Action, ID: idJSON{Group: id.Group, Kind: id.Kind, Name: id.Name, Namespace: id.Namespace, Version: id.Version}, Source: it.Source, UID: it.UID,
		ResourceVersion: it.ResourceVersion, LastApplied: it.LastApplied, Merged: it.Merged, Labels: it.MergedLabels,
		Warnings: it.Warnings, DryRunResult: it.DryRunResult, ChangesKnown: it.ChangesKnown, Subresource: it.Subresource, ShareRecord: it.ShareRecord,
		DigestKeyID: it.DigestKeyID, Wave: it.Wave, WaveReason: it.WaveReason, Verdicts: it.Verdicts}
	if it.Patch.Type != "" || len(it.Patch.Data) > 0 {
		out.Patch = &patchJSON{Type: it.Patch.Type, Data: it.Patch.Data}
	}
	for _, c := range it.Changes {
		out.Changes = append(out.Changes, changeJSON{Path: c.Path.Text(), Old: c.Old, New: c.New, Reason: c.Reason, Owners: c.Owners})
	}
	for _, p := range it.KeptLive {
		out.KeptLive = append(out.KeptLive, p.Text())
	}
	for _, r := range it.Replaced {
		out.Replaced = append(out.Replaced, replacedJSON{Path: r.Path.Text(), Live: r.Live})
	}
	return out
}

func itemFromWire(in itemJSON) (Item, error) {
	it := Item{Action: in.Action, ID: in.ID.id(), Source: in.Source, UID: in.UID,
		ResourceVersion: in.ResourceVersion, LastApplied: in.LastApplied, Merged: in.Merged, MergedLabels: in.Labels,
		Warnings: in.Warnings, DryRunResult: in.DryRunResult, ChangesKnown: in.ChangesKnown, Subresource: in.Subresource, ShareRecord: in.ShareRecord,
		DigestKeyID: in.DigestKeyID, Wave: in.Wave, WaveReason: in.WaveReason, Verdicts: in.Verdicts}
	if in.Patch != nil {
		it.Patch = Patch{Type: in.Patch.Type, Data: compactJSON(in.Patch.Data)}
	}
	for j, c := range in.Changes {
		path, err := fieldpath.ParseText(c.Path)
		if err != nil {
			return Item{}, fmt.Errorf("change %d: %w", j+1, err)
		}
		it.Changes = append(it.Changes, Change{Path: path, Old: c.Old, New: c.New, Reason: c.Reason, Owners: c.Owners})
	}
	for j, p := range in.KeptLive {
		path, err := fieldpath.ParseText(p)
		if err != nil {
			return Item{}, fmt.Errorf("kept field %d: %w", j+1, err)
		}
		it.KeptLive = append(it.KeptLive, path)
	}
	for j, r := range in.Replaced {
		path, err := fieldpath.ParseText(r.Path)
		if err != nil {
			return Item{}, fmt.Errorf("replaced value %d: %w", j+1, err)
		}
		if len(path) == 0 {
			return Item{}, fmt.Errorf("replaced value %d has an empty path", j+1)
		}
		it.Replaced = append(it.Replaced, Replaced{Path: path, Live: r.Live})
	}
	return it, nil
}

// compactJSON undoes a reviewer's reindentation of a patch body, so a
// decoded patch is the bytes that were encoded.
func compactJSON(data json.RawMessage) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, data); err != nil {
		return data
	}
	return b.Bytes()
}
