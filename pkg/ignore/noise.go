package ignore

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/kapply/kapply/pkg/merge"
	"github.com/kapply/kapply/pkg/plan"
)

// Owners reads an object's managedFields: the managers of a field, and
// the fields of a manager (*ownership.Ownership is one).
type Owners interface {
	plan.Owners
	Managed
}

// Noise filters and classifies each object of a diff: the ignored fields
// leave both sides, --explain gets each changed field's class, and
// --suggest-ignore collects the rules that would silence the rest. Adjust
// may be called concurrently (by a diff's workers).
type Noise struct {
	rules    *Rules
	appliers []string
	explain  bool
	suggest  bool
	mu       sync.Mutex
	suggests []*Rule
}

// NewNoise filters by rules (nil: none), classes the changes when
// explain or suggest asks, and suggests rules when suggest does.
// appliers are the managers the diff's dry runs write as. It is nil when
// the diff needs neither rules nor classes.
func NewNoise(rules *Rules, appliers []string, explain, suggest bool) *Noise {
	if rules == nil && !explain && !suggest {
		return nil
	}
	return &Noise{rules: rules, appliers: appliers, explain: explain, suggest: suggest}
}

// Diffed is one object of a diff: the sides and changes it shows, which
// Adjust rewrites, and what they were made from, which Classify reads.
type Diffed struct {
	ID plan.ID
	// Live is the object now (nil for a create); After is what the write
	// leaves; Changes explain Live to After.
	Live, After map[string]any
	Changes     []merge.Change
	// Notes is --explain's block of the fields the file does not cause,
	// set by Adjust under explain.
	Notes string
	// LiveOwners and ResultOwners read the managedFields of the live
	// object and of the server's result; nil when it has none.
	LiveOwners, ResultOwners Owners
	// Item is the object's plan item; its local three-way merge is read
	// for an update or an unchanged object (nil, or another action: a
	// create or a server-side apply).
	Item *plan.Item
	// Sent is the object of the file, as the request sends it.
	Sent map[string]any
	// Exists says the object is in the cluster (rules are suggested only
	// for those).
	Exists bool
}

// Adjust strips the ignored fields from d's sides and changes, and
// classes what is left.
func (n *Noise) Adjust(d *Diffed) {
	if n == nil {
		return
	}
	if n.rules != nil {
		sides := n.rules.Strip(d.ID, d.LiveOwners, d.Live, d.After)
		kept := d.Changes[:0:0]
		for _, c := range d.Changes {
			if Kept(c.Path, sides[0], sides[1]) {
				kept = append(kept, c)
			}
		}
		d.Live, d.After, d.Changes = sides[0], sides[1], kept
	}
	if !n.explain && !n.suggest {
		return
	}
	s := n.sides(d)
	fields := Classify(s)
	if s.File != nil {
		d.Changes = causedByFile(d.Changes, fields)
	}
	if n.explain {
		d.Notes = classNotes(fields)
	}
	if rule := Suggest(d.ID, fields); n.suggest && rule != nil && d.Exists {
		n.mu.Lock()
		n.suggests = append(n.suggests, rule)
		n.mu.Unlock()
	}
}

// sides are what Classify compares for d: the local merge (the object
// sent, for a create), the server's result, and both objects'
// managedFields. Under --server-side there is no local merge to compare.
func (n *Noise) sides(d *Diffed) Sides {
	s := Sides{Live: d.Live, Result: d.After, Appliers: n.appliers}
	if d.LiveOwners != nil {
		s.LiveOwners = d.LiveOwners
	}
	if d.ResultOwners != nil {
		s.ResultOwners = d.ResultOwners
	}
	switch {
	case d.Item != nil && (d.Item.Action == plan.Update || d.Item.Action == plan.Unchanged):
		s.Merged, s.Changes = d.Item.Merged, d.Item.Changes
	case !d.Exists:
		s.Merged = d.Sent
	default:
		// A server-side apply: the server merges; the file says what
		// the request sets.
		s.File = d.Sent
	}
	if n.rules != nil {
		stripped := n.rules.Strip(d.ID, d.LiveOwners, s.Merged, s.File)
		s.Merged, s.File = stripped[0], stripped[1]
		s.Changes = FilterChanges(s.Changes, d.Live, d.After)
	}
	return s
}

// causedByFile drops from a server-side apply's changes (live to the
// server's result, each called set by the file) the fields the server
// changed: --explain gives those their class instead.
func causedByFile(changes []merge.Change, fields []Field) []merge.Change {
	server := map[string]bool{}
	for _, f := range fields {
		if f.Class.FromServer() && f.Class != OtherWriter {
			server[f.Path.String()] = true
		}
	}
	return slices.DeleteFunc(slices.Clone(changes), func(c merge.Change) bool { return server[c.Path.String()] })
}

// classNotes is --explain's block of the fields the file does not cause,
// one line each with its cause (the reasons above give the file's).
func classNotes(fields []Field) string {
	var b strings.Builder
	for _, f := range fields {
		if f.Class.FromServer() {
			fmt.Fprintf(&b, "#   %s: %s\n", f.Path, f)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return "# not caused by the file (kapply diff --suggest-ignore writes rules for these):\n" + b.String()
}

// Finish writes, after the diff, a warning on errOut for each rule whose
// jq ran out of the run's time (the fields it would ignore are shown), the
// suggested rules (--suggest-ignore) and, with --explain, the rules that
// matched nothing.
func (n *Noise) Finish(out, errOut io.Writer) error {
	if n == nil {
		return nil
	}
	for _, r := range n.rules.TimedOut() {
		fmt.Fprintf(errOut, "Warning: %v: the fields it would ignore are shown\n", r.TimeoutError())
	}
	if n.explain && n.rules != nil {
		for _, r := range n.rules.Unmatched() {
			fmt.Fprintf(out, "# ignore rule %s matched nothing\n", r.Origin)
		}
	}
	if !n.suggest {
		return nil
	}
	sort.Slice(n.suggests, func(i, j int) bool { return ruleName(n.suggests[i]) < ruleName(n.suggests[j]) })
	return WriteFile(out, n.suggests)
}

func ruleName(r *Rule) string {
	return strings.Join([]string{*r.Group, r.Kind, r.Namespace, r.Name}, "/")
}
