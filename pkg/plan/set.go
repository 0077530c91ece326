package plan

import (
	"bufio"
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

// EncodeSet writes s as a PlanList document, plan by plan:
//
//	{"apiVersion":"kapply.dev/v1alpha2","kind":"PlanList","plans":[
//	{"context":"a","plan":{...a Plan document...}},
//	...
//	],"checksum":"sha256:..."}
//
// each plan as Encode writes it (Secret values as digests, its own
// checksum), and last a checksum over the contexts and the plans'
// checksums, so that a plan removed, added or moved to another context
// by hand is refused. s is not modified.
func EncodeSet(w io.Writer, s *Set) error {
	if err := checkSetContexts(s.Contexts()); err != nil {
		return err
	}
	for _, e := range s.Plans {
		if err := Check(e.Plan); err != nil {
			return fmt.Errorf("the plan of context %q: %w", e.Context, err)
		}
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	out := newDocWriter(bw)
	out.field("apiVersion", APIVersion)
	out.field("kind", SetKind)
	out.openList("plans")
	for i, e := range s.Plans {
		if i > 0 {
			bw.WriteString(",\n")
		}
		out.count++
		bw.WriteString(`{"context":`)
		context := out.compact(e.Context)
		bw.Write(context)
		out.sum.element(context)
		bw.WriteString(`,"plan":`)
		sum, err := writePlan(bw, e.Plan)
		if err != nil {
			return fmt.Errorf("the plan of context %q: %w", e.Context, err)
		}
		out.sum.element([]byte(sum))
		bw.WriteByte('}')
	}
	if _, err := out.close(); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing the plans: %w", err)
	}
	return nil
}

// plans reads a PlanList's plans, each as Decode reads a plan, summing
// each one's context and checksum.
func (d *docReader) plans(sum *summer) (*Set, error) {
	if err := d.delim('[', "plans"); err != nil {
		return nil, err
	}
	set := &Set{}
	for n := 1; d.dec.More(); n++ {
		e, planSum, err := d.entry(n)
		if err != nil {
			return nil, err
		}
		sum.element(e.context)
		sum.element([]byte(planSum))
		set.Plans = append(set.Plans, Entry{Context: e.name, Plan: e.plan})
	}
	return set, d.delim(']', "plans")
}

type entryRead struct {
	context []byte // compact, as summed
	name    string
	plan    *Plan
}

// entry reads {"context":..., "plan":...}, in either order.
func (d *docReader) entry(n int) (entryRead, string, error) {
	var e entryRead
	var planSum string
	if err := d.delim('{', fmt.Sprintf("plan %d of the %s", n, SetKind)); err != nil {
		return e, "", err
	}
	for d.dec.More() {
		tok, err := d.dec.Token()
		if err != nil {
			return e, "", syntax(err)
		}
		switch name, _ := tok.(string); {
		case name == "context" && e.context == nil:
			if e.context, err = d.raw("a context"); err == nil {
				err = unmarshalStrict(e.context, &e.name)
			}
		case name == "plan" && e.plan == nil:
			if e.plan, _, planSum, err = d.object(true); err != nil && e.context != nil {
				err = fmt.Errorf("the plan of context %q: %w", e.name, err)
			} else if err != nil {
				err = fmt.Errorf("plan %d of the %s: %w", n, SetKind, err)
			}
		case name == "context" || name == "plan":
			err = fmt.Errorf("%w: duplicate field %q", ErrInvalid, name)
		default:
			err = fmt.Errorf("%w: unknown field %q", ErrInvalid, name)
		}
		if err != nil {
			return e, "", err
		}
	}
	if e.plan == nil || e.context == nil {
		return e, "", fmt.Errorf("%w: plan %d of the %s needs a context and a plan", ErrInvalid, n, SetKind)
	}
	_, err := d.dec.Token()
	return e, planSum, syntax(err)
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
