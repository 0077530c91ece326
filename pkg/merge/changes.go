package merge

import (
	"slices"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/schema"
)

// Reason says why a field changes (or, for KeptUnmanaged, why it stays).
type Reason int

const (
	// SetByFile: the file sets the field (a null in the file deletes it).
	SetByFile Reason = iota
	// RemovedFromFile: last-applied had the field and the file dropped it.
	RemovedFromFile
	// KeptUnmanaged: a live-only field that survives; not a change.
	KeptUnmanaged
	// ClearedWithParent: the file sets the enclosing object whole (a
	// retainKeys object such as a Deployment's strategy, or an atomic map),
	// which clears the live fields it does not set.
	ClearedWithParent
)

// String prints the reason as `kapply diff --explain` shows it.
func (r Reason) String() string {
	switch r {
	case RemovedFromFile:
		return "removed from file"
	case KeptUnmanaged:
		return "kept: not managed by the file"
	case ClearedWithParent:
		return "cleared: the file sets its parent object"
	}
	return "set by file"
}

// Change is one explained difference. Old is nil when live lacks the field,
// New is nil when the merged object lacks it. Leaves are reported one by one;
// an atomic list, or a keyed list whose keys are ambiguous, is one leaf; a
// reordered list gets a change of its own; a live-only field is reported once
// at the top of its subtree, with reason KeptUnmanaged and Old == New.
type Change struct {
	Path   fieldpath.Path
	Old    any
	New    any
	Reason Reason
}

// explain lists the changes from live to merged, with reasons read off the
// last-applied configuration and the file.
func explain(l, f, c, m map[string]any, root *schema.Node) []Change {
	e := &explainer{}
	e.object(nil, SetByFile, l, f, c, m, root)
	return e.changes
}

type explainer struct {
	changes []Change
}

// side is one field on the four sides of a merge.
type side struct {
	l, f, c, m         any
	inL, inF, inC, inM bool
}

func (e *explainer) add(where *at, old, new any, r Reason) {
	e.changes = append(e.changes, Change{Path: where.path(), Old: old, New: new, Reason: r})
}

// object explains the fields of a map present on both live and merged (or
// one side of a subtree added or removed whole).
func (e *explainer) object(where *at, parent Reason, l, f, c, m map[string]any, n *schema.Node) {
	for _, k := range fieldpath.UnionKeys(c, m) {
		s := side{}
		s.l, s.inL = l[k]
		s.f, s.inF = f[k]
		s.c, s.inC = c[k]
		s.m, s.inM = m[k]
		if s.inC && s.inM && !s.inF && !s.inL {
			e.add(where.field(k), s.c, s.m, KeptUnmanaged)
			continue
		}
		e.value(where.field(k), reasonFor(s.inF, s.inL, parent), s, n.Field(k))
	}
}

// reasonFor: the file sets it; or last-applied had it; or it goes with its
// parent (cleared when the file sets the parent, else the parent's reason).
func reasonFor(inF, inL bool, parent Reason) Reason {
	switch {
	case inF:
		return SetByFile
	case inL:
		return RemovedFromFile
	case parent == SetByFile:
		return ClearedWithParent
	}
	return parent
}

// value explains one field: maps and mergeable lists are walked, anything
// else that differs is one leaf.
func (e *explainer) value(where *at, r Reason, s side, n *schema.Node) {
	cm, cIsMap := s.c.(map[string]any)
	mm, mIsMap := s.m.(map[string]any)
	cl, cIsList := s.c.([]any)
	ml, mIsList := s.m.([]any)
	switch {
	case s.inC != s.inM && isEmpty(s.c) && isEmpty(s.m):
		e.add(where, s.c, s.m, r)
	case (cIsMap || !s.inC) && (mIsMap || !s.inM):
		e.object(where, r, asMap(s.l), asMap(s.f), cm, mm, n)
	case (cIsList || !s.inC) && (mIsList || !s.inM) && listKind(n) == schema.Map:
		e.keyedList(where, r, s, cl, ml, n)
	case (cIsList || !s.inC) && (mIsList || !s.inM) && listKind(n) == schema.Set:
		e.setList(where, r, s, cl, ml)
	case s.inC != s.inM || !fieldpath.Equal(s.c, s.m):
		e.add(where, s.c, s.m, r)
	}
}

// keyedList explains elements matched by key; duplicates make the list one
// leaf.
func (e *explainer) keyedList(where *at, r Reason, s side, cl, ml []any, n *schema.Node) {
	ck, cOK := keyedOrNil(cl, n.Keys)
	mk, mOK := keyedOrNil(ml, n.Keys)
	if !cOK || !mOK || hasDuplicate(ck) || hasDuplicate(mk) {
		if s.inC != s.inM || !fieldpath.Equal(s.c, s.m) {
			e.add(where, s.c, s.m, r)
		}
		return
	}
	lk, lOK := keyedOrNil(listOrNil(s.l), n.Keys)
	fk, fOK := keyedOrNil(listOrNil(s.f), n.Keys)
	if !lOK || !fOK {
		lk, fk = nil, nil
	}
	lIdx, fIdx, cIdx, mIdx := index(lk), index(fk), index(ck), index(mk)
	for _, key := range unionOrder(ck, mk) {
		el := elemSide(lk, lIdx, fk, fIdx, ck, cIdx, mk, mIdx, key)
		w := where.key(n.Keys, firstMap(el.c, el.m))
		if el.inC && el.inM && !el.inF && !el.inL {
			e.add(w, el.c, el.m, KeptUnmanaged)
			continue
		}
		e.value(w, reasonFor(el.inF, el.inL, r), el, n.Item())
	}
	e.order(where, s, ck, mk)
}

// setList explains values added, removed and kept.
func (e *explainer) setList(where *at, r Reason, s side, cl, ml []any) {
	ci, mi := scalarItems(cl), scalarItems(ml)
	inL, inF := keySet(scalarItems(listOrNil(s.l))), keySet(scalarItems(listOrNil(s.f)))
	inC, inM := keySet(ci), keySet(mi)
	for _, it := range dedupe(append(slices.Clone(ci), mi...)) {
		switch {
		case inC[it.key] && inM[it.key] && !inF[it.key] && !inL[it.key]:
			e.add(where.value(it.val), it.val, it.val, KeptUnmanaged)
		case inC[it.key] && !inM[it.key]:
			e.add(where.value(it.val), it.val, nil, reasonFor(inF[it.key], inL[it.key], r))
		case !inC[it.key] && inM[it.key]:
			e.add(where.value(it.val), nil, it.val, SetByFile)
		}
	}
	e.order(where, s, toKeyed(ci), toKeyed(mi))
}

// order reports a list whose common elements change their relative order:
// no leaf differs, yet the list does.
func (e *explainer) order(where *at, s side, ck, mk []keyed) {
	inC, inM := keyedSet(ck), keyedSet(mk)
	var before, after []string
	for _, k := range ck {
		if inM[k.key] {
			before = append(before, k.key)
		}
	}
	for _, k := range mk {
		if inC[k.key] {
			after = append(after, k.key)
		}
	}
	if !slices.Equal(before, after) {
		e.add(where, s.c, s.m, SetByFile)
	}
}
