package plan

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/secretmask"
)

// ErrChanged is the cause of every ChangedError.
var ErrChanged = errors.New("changed since the plan")

// ChangedError refuses an item whose object changed since the plan in a
// way the plan depends on. It names fields, never values.
type ChangedError struct {
	ID ID
	// What happened to the object as a whole ("it was deleted"), or ""
	// when Fields say what changed.
	What string
	// Fields the plan writes or read whose live value is not the one the
	// plan was made against; the last-applied record is named by its
	// annotation's path.
	Fields []fieldpath.Path
}

// maxNamedFields bounds the fields an error names; the rest are counted.
const maxNamedFields = 5

func (e *ChangedError) Error() string {
	if e.What != "" {
		return fmt.Sprintf("%s %s: %s", e.ID, ErrChanged, e.What)
	}
	names := make([]string, 0, maxNamedFields)
	for i, p := range e.Fields {
		if i == maxNamedFields {
			names = append(names, fmt.Sprintf("and %d more", len(e.Fields)-i))
			break
		}
		names = append(names, p.String())
	}
	return fmt.Sprintf("%s %s: %s", e.ID, ErrChanged, strings.Join(names, ", "))
}

func (e *ChangedError) Unwrap() error { return ErrChanged }

var recordPath = fieldpath.Fields("metadata", "annotations", lastapplied.Annotation)

// Verify checks the item against live, the object as it is now (nil:
// absent), and returns the resourceVersion its write must carry as a
// precondition. A create is refused if the object exists; a prune or
// delete if its UID or resourceVersion moved, and so is a server-side
// apply that records no changes and no dry run (a server-side apply's
// changes are its dry run's: with one, no change is a known answer). Any
// other item is refused if
// the object was deleted or replaced (UID), or — when its resourceVersion
// moved — if a field the plan writes (its changes, and each list or map its
// patch replaces whole: Replaced) or read (the last-applied record) is no
// longer what the plan saw; a move through status or fields the plan does
// not touch only updates the resourceVersion returned.
func (it Item) Verify(live *unstructured.Unstructured) (string, error) {
	refuse := func(what string, args ...any) (string, error) {
		return "", &ChangedError{ID: it.ID, What: fmt.Sprintf(what, args...)}
	}
	switch {
	case it.Action == Create && live != nil:
		return refuse("it was created since (UID %s)", live.GetUID())
	case it.Action == Create:
		return "", nil
	case live == nil && it.UID == "":
		return "", nil // a server-side apply that creates
	case live == nil:
		return refuse("it was deleted")
	case string(live.GetUID()) != it.UID:
		return refuse("it was deleted and created again (UID %s, the plan's %s)", live.GetUID(), it.UID)
	case live.GetResourceVersion() == it.ResourceVersion:
		return it.ResourceVersion, nil
	case it.Action == Prune || it.Action == Delete:
		return refuse("resourceVersion %s, the plan's %s", live.GetResourceVersion(), it.ResourceVersion)
	case it.Action == Apply && len(it.Changes) == 0 && it.DryRunResult == nil && !it.ChangesKnown:
		// The server merges an apply body; without the plan's changes
		// nothing says which live values it was approved against.
		return refuse("resourceVersion %s, the plan's %s, and the plan records no changes of this server-side apply to check", live.GetResourceVersion(), it.ResourceVersion)
	}
	if err := it.checkDigestKey(); err != nil {
		return "", err
	}
	if changed := it.changedFields(live); len(changed) > 0 {
		return "", &ChangedError{ID: it.ID, Fields: changed}
	}
	return live.GetResourceVersion(), nil
}

// changedFields lists the fields the plan writes or read that live no
// longer has as the plan saw them.
func (it Item) changedFields(live *unstructured.Unstructured) []fieldpath.Path {
	var out []fieldpath.Path
	if recordDigest(live, it.DigestKey) != it.LastApplied {
		out = append(out, recordPath)
	}
	for _, c := range it.Changes {
		if checkedByVerify(c) && !stillAsPlanned(it.DigestKey, c, live.Object) {
			out = append(out, c.Path)
		}
	}
	out = append(out, it.movedReplacedValues(live)...)
	out = append(out, it.movedKeptFields(live)...)
	return append(out, it.changedStringDataTargets(live)...)
}

// checkedByVerify: a change Verify compares with live. A field kept as
// live has it is not written; the record is compared by its digest.
func checkedByVerify(c Change) bool {
	return c.Reason != KeptUnmanaged && !c.Path.Equals(recordPath)
}

// movedReplacedValues are the values a patch item's patch replaces whole
// (Replaced) that live no longer holds as the plan saw them: the patch
// would drop what another writer added there, e.g. an element a
// controller added to a custom resource's keyed list, which no change
// names. An item its ignore rules left unchanged writes nothing.
func (it Item) movedReplacedValues(live *unstructured.Unstructured) []fieldpath.Path {
	if it.Action != Update {
		return nil
	}
	var out []fieldpath.Path
	for _, r := range it.Replaced {
		if !it.stillReplaceable(r, live.Object) {
			out = append(out, r.Path)
		}
	}
	return out
}

// stillReplaceable reports whether live holds r's value at its path. A
// Secret's map of values is compared key by key, each as a change of
// that key (a saved plan holds digests).
func (it Item) stillReplaceable(r Replaced, live map[string]any) bool {
	values, isMap := r.Live.(map[string]any)
	if _, fields := secretPath(r.Path); !it.ID.isSecret() || !isMap || len(fields) != 1 || !slices.Contains(secretmask.Fields(), fields[0]) {
		return stillAsPlanned(it.DigestKey, Change{Path: r.Path, Old: r.Live}, live)
	}
	now, err := r.Path.Lookup(live)
	nowMap, nowIsMap := now.(map[string]any)
	if err != nil || !nowIsMap || len(nowMap) != len(values) {
		return false
	}
	for k, v := range values {
		if _, ok := nowMap[k]; !ok || !stillAsPlanned(it.DigestKey, Change{Path: r.Path.Child(fieldpath.Field(k)), Old: v}, live) {
			return false
		}
	}
	return true
}

// movedKeptFields are the fields an apply body keeps at their live values
// (KeptLive) that live no longer holds: the body would write the old
// value back over the writer the rules leave them to.
func (it Item) movedKeptFields(live *unstructured.Unstructured) []fieldpath.Path {
	if len(it.KeptLive) == 0 || it.Patch.Type != ApplyPatch {
		// A patch does not write the kept fields: a writer moving them
		// since the plan is tolerated (docs/ignore.md).
		return nil
	}
	body := patchObject(it.Patch)
	var out []fieldpath.Path
	for _, p := range it.KeptLive {
		planned, err := p.Lookup(body)
		if err != nil {
			planned = nil // the body leaves it out: live had none
		}
		if !stillAsPlanned(it.DigestKey, Change{Path: p, Old: planned}, live.Object) {
			out = append(out, p)
		}
	}
	return out
}

// stillAsPlanned reports whether live holds the change's Old value at its
// path (both absent counts): a Secret's Old may be a digest.
func stillAsPlanned(k lastapplied.DigestKey, c Change, live map[string]any) bool {
	now, err := c.Path.Lookup(live)
	switch {
	case errors.Is(err, fieldpath.ErrFieldNotFound):
		return c.Old == nil
	case err != nil:
		return false // e.g. several list elements match now
	case lastapplied.IsRedacted(c.Old):
		_, fields := secretPath(c.Path)
		return len(fields) == 2 && lastapplied.MatchesRedacted(k, c.Old, fields[0], fields[1], now)
	}
	return fieldpath.Equal(c.Old, now)
}
