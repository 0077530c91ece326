package plan

import (
	"bytes"
	"encoding/json"
	"fmt"

	sigsjson "sigs.k8s.io/json"

	"github.com/kapply/kapply/pkg/fieldpath"
)

// The document's shape. Plan and Item carry no JSON tags: the wire form
// is its own set of types, so the Go API can change without changing
// what saved plans mean, and each field's spelling is decided here.

type document struct {
	APIVersion string       `json:"apiVersion"`
	Kind       string       `json:"kind"`
	Checksum   string       `json:"checksum"`
	Cluster    clusterJSON  `json:"cluster"`
	Settings   settingsJSON `json:"settings,omitzero"`
	Items      []itemJSON   `json:"items"`
}

// settingsJSON is Settings; every field optional (the zero value is
// kubectl's way).
type settingsJSON struct {
	FieldManager      string `json:"fieldManager,omitempty"`
	ServerSide        bool   `json:"serverSide,omitempty"`
	ForceConflicts    bool   `json:"forceConflicts,omitempty"`
	FieldValidation   string `json:"fieldValidation,omitempty"`
	Namespace         string `json:"namespace,omitempty"`
	ApplySet          string `json:"applySet,omitempty"`
	PlainSecretRecord bool   `json:"plainSecretRecord,omitempty"`
}

type clusterJSON struct {
	Server  string `json:"server"`
	Context string `json:"context,omitempty"`
	User    string `json:"user,omitempty"`
	ID      string `json:"id,omitempty"`
}

type itemJSON struct {
	Action          Action          `json:"action"`
	ID              ID              `json:"id"`
	Source          Source          `json:"source,omitzero"`
	UID             string          `json:"uid,omitempty"`
	ResourceVersion string          `json:"resourceVersion,omitempty"`
	LastApplied     string          `json:"lastApplied,omitempty"`
	DigestKeyID     string          `json:"digestKey,omitempty"`
	Patch           *patchJSON      `json:"patch,omitempty"`
	Subresource     string          `json:"subresource,omitempty"`
	ShareRecord     bool            `json:"shareRecord,omitempty"`
	Merged          map[string]any  `json:"merged,omitempty"`
	Changes         []changeJSON    `json:"changes,omitempty"`
	Warnings        []string        `json:"warnings,omitempty"`
	DryRunResult    map[string]any  `json:"dryRunResult,omitempty"`
	ChangesKnown    bool            `json:"changesKnown,omitempty"`
	KeptLive        [][]elementJSON `json:"keptLive,omitempty"`
	Replaced        []replacedJSON  `json:"replaced,omitempty"`
}

// replacedJSON is a value the patch replaces whole: its path, and the live
// value (absent: live had none).
type replacedJSON struct {
	Path []elementJSON `json:"path"`
	Live any           `json:"live,omitempty"`
}

// patchJSON holds the body as JSON, not base64: a reviewer reads it.
type patchJSON struct {
	Type PatchType       `json:"type"`
	Data json.RawMessage `json:"data"`
}

type changeJSON struct {
	Path   []elementJSON `json:"path"`
	Old    any           `json:"old,omitempty"`
	New    any           `json:"new,omitempty"`
	Reason Reason        `json:"reason"`
	Owners []string      `json:"owners,omitempty"`
}

// elementJSON is one step of a path, exactly one of its fields set. A path
// is kept step by step, not as its text: the text of a key holds its value
// as text only (80 and "80" print alike), and Parse refuses positions.
type elementJSON struct {
	Field *string         `json:"field,omitempty"`
	Keys  []keyJSON       `json:"keys,omitempty"`
	Value json.RawMessage `json:"value,omitempty"`
	Index *int            `json:"index,omitempty"`
}

type keyJSON struct {
	Name  string `json:"name"`
	Value any    `json:"value"`
}

func toWire(p *Plan) (*document, error) {
	c := p.Cluster
	doc := &document{APIVersion: APIVersion, Kind: Kind,
		Cluster:  clusterJSON{Server: c.Server, Context: c.Context, User: c.User, ID: c.ID},
		Settings: settingsJSON(p.Settings),
		Items:    make([]itemJSON, len(p.Items))}
	for i, it := range p.Items {
		var err error
		if doc.Items[i], err = itemToWire(it); err != nil {
			return nil, fmt.Errorf("item %d (%s): %w", i+1, it.ID, err)
		}
	}
	return doc, nil
}

func itemToWire(it Item) (itemJSON, error) {
	out := itemJSON{Action: it.Action, ID: it.ID, Source: it.Source, UID: it.UID,
		ResourceVersion: it.ResourceVersion, LastApplied: it.LastApplied, Merged: it.Merged,
		Warnings: it.Warnings, DryRunResult: it.DryRunResult, ChangesKnown: it.ChangesKnown, Subresource: it.Subresource, ShareRecord: it.ShareRecord,
		DigestKeyID: it.DigestKeyID}
	if it.Patch.Type != "" || len(it.Patch.Data) > 0 {
		out.Patch = &patchJSON{Type: it.Patch.Type, Data: it.Patch.Data}
	}
	for _, c := range it.Changes {
		path, err := pathToWire(c.Path)
		if err != nil {
			return itemJSON{}, fmt.Errorf("the change of %s: %w", c.Path, err)
		}
		out.Changes = append(out.Changes, changeJSON{Path: path, Old: c.Old, New: c.New, Reason: c.Reason, Owners: c.Owners})
	}
	for _, p := range it.KeptLive {
		path, err := pathToWire(p)
		if err != nil {
			return itemJSON{}, fmt.Errorf("the kept field %s: %w", p, err)
		}
		out.KeptLive = append(out.KeptLive, path)
	}
	for _, r := range it.Replaced {
		path, err := pathToWire(r.Path)
		if err != nil {
			return itemJSON{}, fmt.Errorf("the replaced value of %s: %w", r.Path, err)
		}
		out.Replaced = append(out.Replaced, replacedJSON{Path: path, Live: r.Live})
	}
	return out, nil
}

func pathToWire(p fieldpath.Path) ([]elementJSON, error) {
	out := make([]elementJSON, len(p))
	for i, e := range p {
		switch {
		case e.IsKey():
			for _, kv := range e.Keys {
				out[i].Keys = append(out[i].Keys, keyJSON{Name: kv.Name, Value: kv.Value})
			}
		case e.IsValue():
			v, err := json.Marshal(e.Value)
			if err != nil {
				return nil, fmt.Errorf("encoding a value of its path: %w", err)
			}
			out[i].Value = v
		case e.IsIndex():
			out[i].Index = &e.Index
		default:
			out[i].Field = &e.Field
		}
	}
	return out, nil
}

func fromWire(doc *document) (*Plan, error) {
	c := doc.Cluster
	p := &Plan{Cluster: Cluster{Server: c.Server, Context: c.Context, User: c.User, ID: c.ID}, Settings: Settings(doc.Settings)}
	if len(doc.Items) > 0 {
		p.Items = make([]Item, len(doc.Items))
	}
	for i, in := range doc.Items {
		var err error
		if p.Items[i], err = itemFromWire(in); err != nil {
			return nil, fmt.Errorf("item %d (%s): %w", i+1, in.ID, err)
		}
	}
	return p, nil
}

func itemFromWire(in itemJSON) (Item, error) {
	it := Item{Action: in.Action, ID: in.ID, Source: in.Source, UID: in.UID,
		ResourceVersion: in.ResourceVersion, LastApplied: in.LastApplied, Merged: in.Merged,
		Warnings: in.Warnings, DryRunResult: in.DryRunResult, ChangesKnown: in.ChangesKnown, Subresource: in.Subresource, ShareRecord: in.ShareRecord,
		DigestKeyID: in.DigestKeyID}
	if in.Patch != nil {
		it.Patch = Patch{Type: in.Patch.Type, Data: compactJSON(in.Patch.Data)}
	}
	for j, c := range in.Changes {
		path, err := pathFromWire(c.Path)
		if err != nil {
			return Item{}, fmt.Errorf("change %d: %w", j+1, err)
		}
		it.Changes = append(it.Changes, Change{Path: path, Old: c.Old, New: c.New, Reason: c.Reason, Owners: c.Owners})
	}
	for j, p := range in.KeptLive {
		path, err := pathFromWire(p)
		if err != nil {
			return Item{}, fmt.Errorf("kept field %d: %w", j+1, err)
		}
		it.KeptLive = append(it.KeptLive, path)
	}
	for j, r := range in.Replaced {
		path, err := pathFromWire(r.Path)
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

// compactJSON undoes the document's indentation of a patch body, so a
// decoded patch is the bytes that were encoded.
func compactJSON(data json.RawMessage) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, data); err != nil {
		return data
	}
	return b.Bytes()
}

func pathFromWire(in []elementJSON) (fieldpath.Path, error) {
	path := make(fieldpath.Path, len(in))
	for i, e := range in {
		set := 0
		for _, has := range []bool{e.Field != nil, e.Keys != nil, e.Value != nil, e.Index != nil} {
			if has {
				set++
			}
		}
		if set != 1 {
			return nil, fmt.Errorf("step %d of a path must have exactly one of field, keys, value, index", i+1)
		}
		switch {
		case e.Field != nil:
			path[i] = fieldpath.Field(*e.Field)
		case e.Keys != nil && len(e.Keys) == 0:
			return nil, fmt.Errorf("step %d of a path has an empty list of keys", i+1)
		case e.Keys != nil:
			kvs := make([]fieldpath.KeyValue, len(e.Keys))
			for j, kv := range e.Keys {
				kvs[j] = fieldpath.KeyValue{Name: kv.Name, Value: kv.Value}
			}
			path[i] = fieldpath.Key(kvs)
		case e.Index != nil:
			if *e.Index < 0 {
				return nil, fmt.Errorf("step %d of a path has a negative index", i+1)
			}
			path[i] = fieldpath.Index(*e.Index)
		default:
			var v any
			if err := sigsjson.UnmarshalCaseSensitivePreserveInts(e.Value, &v); err != nil {
				return nil, fmt.Errorf("step %d of a path: %w", i+1, err)
			}
			path[i] = fieldpath.Value(v)
		}
	}
	return path, nil
}
