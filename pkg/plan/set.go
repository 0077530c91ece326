package plan

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// SetKind is the kind of a document holding one plan per kubeconfig
// context (kapply plan --contexts): a PlanList of the same apiVersion as
// Plan, each of its plans a whole Plan document, checksum included, so
// that one taken out is a plan apply --plan reads alone.
const SetKind = "PlanList"

// Set is one plan per kubeconfig context, in the order of the run that
// made them. A plan is for its context's cluster only: it names objects
// by UID and resourceVersion there.
type Set struct {
	Plans []Entry
}

// Entry is the plan of one context.
type Entry struct {
	// Context is the kubeconfig context the plan was made through; a run
	// over many contexts picks each context's plan by this name.
	Context string
	Plan    *Plan
}

// For is the plan of context, if the set has one.
func (s *Set) For(context string) (*Plan, bool) {
	for _, e := range s.Plans {
		if e.Context == context {
			return e.Plan, true
		}
	}
	return nil, false
}

// Contexts are the set's context names, in order.
func (s *Set) Contexts() []string {
	out := make([]string, len(s.Plans))
	for i, e := range s.Plans {
		out[i] = e.Context
	}
	return out
}

type setDocument struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Checksum   string         `json:"checksum"`
	Plans      []setEntryJSON `json:"plans"`
}

type setEntryJSON struct {
	Context string   `json:"context"`
	Plan    document `json:"plan"`
}

// EncodeSet writes s as a PlanList document: each plan as Encode writes
// it (Secret values as digests, its own checksum), and a checksum over
// the whole, so that a plan removed, added or moved to another context
// by hand is refused. s is not modified.
func EncodeSet(w io.Writer, s *Set) error {
	if err := checkSetContexts(s.Contexts()); err != nil {
		return err
	}
	doc := &setDocument{APIVersion: APIVersion, Kind: SetKind, Plans: make([]setEntryJSON, len(s.Plans))}
	for i, e := range s.Plans {
		one, err := encodeDocument(e.Plan)
		if err != nil {
			return fmt.Errorf("the plan of context %q: %w", e.Context, err)
		}
		doc.Plans[i] = setEntryJSON{Context: e.Context, Plan: *one}
	}
	var err error
	if doc.Checksum, err = setChecksum(doc); err != nil {
		return err
	}
	return writeIndented(w, doc)
}

// decodeSet reads a PlanList document: its checksum, then each plan as
// Decode reads one.
func decodeSet(data []byte) (*Set, error) {
	var doc setDocument
	if err := unmarshalStrict(data, &doc); err != nil {
		return nil, err
	}
	want, err := setChecksum(&doc)
	if err := checkSum(doc.Checksum, want, err, "the plans were changed after they were written (edited by hand?); make new plans"); err != nil {
		return nil, err
	}
	set := &Set{Plans: make([]Entry, len(doc.Plans))}
	for i := range doc.Plans {
		e := &doc.Plans[i]
		p, err := decodeDocument(&e.Plan)
		if err != nil {
			return nil, fmt.Errorf("the plan of context %q: %w", e.Context, err)
		}
		set.Plans[i] = Entry{Context: e.Context, Plan: p}
	}
	if err := checkSetContexts(set.Contexts()); err != nil {
		return nil, err
	}
	return set, nil
}

// checkSetContexts refuses a set without plans, a plan without a context,
// and a context twice: a run picks each context's plan by name.
func checkSetContexts(contexts []string) error {
	if len(contexts) == 0 {
		return fmt.Errorf("%w: a %s holds no plan", ErrInvalid, SetKind)
	}
	for i, c := range contexts {
		switch {
		case strings.TrimSpace(c) == "":
			return fmt.Errorf("%w: plan %d of the %s names no context", ErrInvalid, i+1, SetKind)
		case slices.Index(contexts, c) != i:
			return fmt.Errorf("%w: context %q has two plans in the %s", ErrInvalid, c, SetKind)
		}
	}
	return nil
}

// setChecksum is checksum's for a PlanList: over its compact JSON with
// its own checksum empty (the plans' checksums included).
func setChecksum(doc *setDocument) (string, error) {
	c := *doc
	c.Checksum = ""
	return sumJSON(&c)
}
