package merge

import (
	"encoding/json"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/schema"
)

// Result is the outcome of a three-way merge: what the live object
// becomes, the patch that gets it there, and why each field changes.
// (A plan is plan.Plan, whose items are built from results.)
type Result struct {
	// Merged is what the live object becomes. It shares no memory with the
	// inputs.
	Merged map[string]any
	// Patch turns the live object into Merged on the server.
	Patch Patch
	// Changes lists every leaf that differs between live and Merged, plus
	// the live-only subtrees that survive (KeptUnmanaged), in a stable order.
	// It is nil when the result is empty: nothing differs, and listing what
	// is kept of every unchanged object was a third of planning a no-op.
	Changes []Change
	// Warnings are situations the user should know about, such as lists
	// whose merge keys are ambiguous.
	Warnings []Warning
	// Whole are the paths whose live value the patch replaces rather than
	// merges into, in path order: a list a merge patch sends, an atomic
	// list or map, a `$patch: replace`, a retainKeys map, a value deleted
	// by null or `$patch: delete`, and the atomic parts of a value sent
	// where live has none. The patch drops whatever another writer puts
	// there after live was read, so a saved plan checks them whole.
	Whole []fieldpath.Path

	empty bool
}

// Patch is a request body for the server.
type Patch struct {
	Type types.PatchType
	Data []byte
}

// Empty reports whether nothing changes: the caller sends no request.
func (p *Result) Empty() bool { return p.empty }

// Warning is a remark about one field.
type Warning struct {
	Path    fieldpath.Path
	Message string
}

// String prints the path and the message.
func (w Warning) String() string { return fmt.Sprintf("%s: %s", w.Path, w.Message) }

// ThreeWay merges file into live, deleting what lastApplied (nil when
// absent) had and file no longer has, under the schema of the object's kind
// (nil or a nil Root: everything unknown). It never modifies its inputs.
func ThreeWay(lastApplied, file, live map[string]any, kind *schema.Kind) (*Result, error) {
	root, strategic := kindRoot(kind)
	m := &merger{strategic: strategic}
	merged, err := m.mergeObject(nil, lastApplied, orEmpty(file), live, root)
	if err != nil {
		return nil, fmt.Errorf("merging the file into the live object: %w", err)
	}
	plan := &Result{Merged: merged, Warnings: m.warnings}
	if err := plan.setPatch(live, root, strategic); err != nil {
		return nil, err
	}
	if !plan.empty {
		plan.Changes = explain(lastApplied, file, live, merged, root)
	}
	return plan, nil
}

func kindRoot(kind *schema.Kind) (*schema.Node, bool) {
	if kind == nil {
		return nil, false
	}
	return kind.Root, kind.Strategic
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// setPatch builds the patch for the kind's patch type, guards it with the
// live resourceVersion when it replaces a list whole, and encodes it.
func (p *Result) setPatch(live map[string]any, root *schema.Node, strategic bool) error {
	var body map[string]any
	var guard bool
	var whole []fieldpath.Path
	if strategic {
		body, guard, whole = strategicPatch(live, p.Merged, root)
		p.Patch.Type = types.StrategicMergePatchType
	} else {
		body, guard, whole = mergePatch(live, p.Merged, root)
		p.Patch.Type = types.MergePatchType
	}
	p.empty = len(body) == 0
	if !p.empty {
		p.Whole = sortedPaths(whole)
	}
	if guard && !p.empty {
		p.guardWithResourceVersion(body, live)
	}
	data, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("encoding the patch: %w", err)
	}
	p.Patch.Data = data
	return nil
}

// guardWithResourceVersion makes the server reject the patch with 409 if
// the object changed since it was read: the patch replaces a list computed
// from that read, and would otherwise drop a concurrent writer's elements.
// A resourceVersion the file sets itself is already such a precondition and
// stays; a null (last-applied had one, the file dropped it) gives way to the
// live one, since the server assigns a new one on every write anyway.
func (p *Result) guardWithResourceVersion(body, live map[string]any) {
	rv, hasRV := asMap(live["metadata"])["resourceVersion"].(string)
	md, present := body["metadata"]
	mdMap, isMap := md.(map[string]any)
	if !hasRV || rv == "" || (present && !isMap) {
		p.Warnings = append(p.Warnings, Warning{Path: fieldpath.Fields("metadata", "resourceVersion"),
			Message: "the patch replaces a list whole but cannot carry the live resourceVersion; a concurrent change to that list may be lost"})
		return
	}
	if !present {
		mdMap = map[string]any{}
		body["metadata"] = mdMap
	}
	if mdMap["resourceVersion"] == nil {
		mdMap["resourceVersion"] = rv
	}
}

// sortedPaths orders paths (Path.Compare), so that a plan made twice from
// the same objects is the same (the patch builders walk maps).
func sortedPaths(paths []fieldpath.Path) []fieldpath.Path {
	slices.SortFunc(paths, fieldpath.Path.Compare)
	return paths
}
