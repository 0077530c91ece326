package ignore

import (
	"context"
	"fmt"
	"path"
	"sync"
	"sync/atomic"
	"time"

	"github.com/itchyny/gojq"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/plan"
)

// Rule is one ignore rule: a scope and the fields it ignores in objects
// of that scope. The YAML names are Argo CD's ignoreDifferences'.
type Rule struct {
	// Group is nil for any group; "" is the core group.
	Group *string `yaml:"group,omitempty"`
	// Kind is "" for any kind.
	Kind string `yaml:"kind,omitempty"`
	// Namespace and Name are globs (path.Match); "" matches any.
	Namespace             string   `yaml:"namespace,omitempty"`
	Name                  string   `yaml:"name,omitempty"`
	JSONPointers          []string `yaml:"jsonPointers,omitempty"`
	JQPathExpressions     []string `yaml:"jqPathExpressions,omitempty"`
	ManagedFieldsManagers []string `yaml:"managedFieldsManagers,omitempty"`

	// Origin says where the rule was written: "rules.yaml:12" or
	// "--ignore #2".
	Origin string `yaml:"-"`
	jq     []*gojq.Code
	hits   atomic.Int64
	// budget is the run's jq time, shared by the rules of one Rules (nil
	// for a rule used alone: jqTimeout per expression and object).
	budget *jqBudget
	// timedOut is set when one of the rule's jq expressions ran out of
	// time: the rule is not run again in this run, its answer unknown.
	timedOut atomic.Bool
}

// jqTimeout bounds one jq expression on one object, as Argo CD bounds
// it: a user's expression must not hang a diff. It is also the budget of
// all the jq expressions of one run together: with a bound per object
// only, an expression that never yields cost its time on every object
// (40 objects: 31 s).
const jqTimeout = 5 * time.Second

// jqBudget is the jq time a run has left. Expressions running at once
// each get what is left when they start, so a run spends at most its
// budget times its parallel workers.
type jqBudget struct {
	mu   sync.Mutex
	left time.Duration
}

// start returns the time the next expression may take; ok is false when
// none is left.
func (b *jqBudget) start() (time.Duration, bool) {
	if b == nil {
		return jqTimeout, true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.left, b.left > 0
}

// spend takes d off what is left.
func (b *jqBudget) spend(d time.Duration) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.left -= d
	b.mu.Unlock()
}

// compile checks the rule and compiles its jq expressions.
func (r *Rule) compile() error {
	if len(r.JSONPointers)+len(r.JQPathExpressions)+len(r.ManagedFieldsManagers) == 0 {
		return fmt.Errorf("the rule ignores nothing: give jsonPointers, jqPathExpressions or managedFieldsManagers")
	}
	for _, glob := range []string{r.Namespace, r.Name} {
		if _, err := path.Match(glob, ""); err != nil {
			return &valueError{glob, fmt.Errorf("bad glob %q: %w", glob, err)}
		}
	}
	for _, p := range r.JSONPointers {
		if _, err := parsePointer(p); err != nil {
			return &valueError{p, err}
		}
	}
	r.jq = r.jq[:0]
	for _, expr := range r.JQPathExpressions {
		// path(...) yields the paths the expression selects, which are
		// then removed from each side (Argo CD runs del(...) instead;
		// paths let a rule that matched nothing be told, and apply
		// --respect-ignore copy the live values there).
		q, err := gojq.Parse("path(" + expr + ")")
		if err != nil {
			return &valueError{expr, fmt.Errorf("jq expression %q: %w", expr, err)}
		}
		code, err := gojq.Compile(q)
		if err != nil {
			return &valueError{expr, fmt.Errorf("jq expression %q: %w", expr, err)}
		}
		r.jq = append(r.jq, code)
	}
	for _, m := range r.ManagedFieldsManagers {
		if m == "" {
			return fmt.Errorf("an empty manager name")
		}
	}
	return nil
}

// valueError is a rule's value that is wrong, so that a rules file's
// error names the value's own line.
type valueError struct {
	value string
	err   error
}

func (e *valueError) Error() string { return e.err.Error() }
func (e *valueError) Unwrap() error { return e.err }

// Applies reports whether the rule's scope holds the object id.
func (r *Rule) Applies(id plan.ID) bool {
	if r.Group != nil && *r.Group != id.Group {
		return false
	}
	if r.Kind != "" && r.Kind != id.Kind {
		return false
	}
	return globMatch(r.Namespace, id.Namespace) && globMatch(r.Name, id.Name)
}

func globMatch(glob, s string) bool {
	if glob == "" {
		return true
	}
	ok, err := path.Match(glob, s)
	return err == nil && ok
}

// Hits is how many fields the rule removed so far, over every object.
func (r *Rule) Hits() int64 { return r.hits.Load() }

// Rules is a set of rules, from a file and flags; safe for concurrent
// use by a diff's workers.
type Rules struct {
	list   []*Rule
	budget *jqBudget
}

// Add appends rules, checking each; the error names the rule's origin.
func (rs *Rules) Add(rules ...*Rule) error {
	for _, r := range rules {
		if err := r.compile(); err != nil {
			return fmt.Errorf("%s: %w", r.Origin, err)
		}
		if rs.budget == nil {
			rs.budget = &jqBudget{left: jqTimeout}
		}
		r.budget = rs.budget
		rs.list = append(rs.list, r)
	}
	return nil
}

// Empty reports a set without rules (nil included).
func (rs *Rules) Empty() bool { return rs == nil || len(rs.list) == 0 }

// List is the rules in the order they were added.
func (rs *Rules) List() []*Rule {
	if rs == nil {
		return nil
	}
	return rs.list
}

// TimedOut are the rules whose jq expressions ran out of the run's time:
// what they would ignore is unknown, so a diff shows those fields.
func (rs *Rules) TimedOut() []*Rule {
	var out []*Rule
	for _, r := range rs.List() {
		if r.timedOut.Load() {
			out = append(out, r)
		}
	}
	return out
}

// Unmatched are the rules that removed no field of any object so far.
func (rs *Rules) Unmatched() []*Rule {
	var out []*Rule
	for _, r := range rs.List() {
		if r.Hits() == 0 {
			out = append(out, r)
		}
	}
	return out
}

// For is the rules whose scope holds id.
func (rs *Rules) For(id plan.ID) []*Rule {
	var out []*Rule
	for _, r := range rs.List() {
		if r.Applies(id) {
			out = append(out, r)
		}
	}
	return out
}

// runJQ returns the paths code selects in obj that obj holds, each once.
// The paths are taken one by one, not collected in [path(EXPR)]: an
// expression yielding paths without end (repeat, recurse) held them all
// until its time ran out, 400 MB for one Secret; kept only when obj holds
// them and once each, they are bounded by obj. An error (iterating a field
// obj lacks) is no match at all, as before.
func runJQ(code *gojq.Code, obj map[string]any, budget *jqBudget) ([]fieldpath.Path, error) {
	limit, ok := budget.start()
	if !ok {
		return nil, context.DeadlineExceeded
	}
	began := time.Now()
	defer func() { budget.spend(time.Since(began)) }()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	iter := code.RunWithContext(ctx, jqValue(obj))
	var out []fieldpath.Path
	seen := map[string]bool{}
	for {
		v, ok := iter.Next()
		if !ok {
			return out, nil
		}
		if err, isErr := v.(error); isErr {
			return nil, err
		}
		steps, _ := v.([]any)
		fp, ok := jqPath(steps)
		if !ok || !exists(fp, obj) {
			continue
		}
		if s := fp.String(); !seen[s] {
			seen[s] = true
			out = append(out, fp)
		}
	}
}

// jqValue converts obj to the types gojq takes: its integers are int,
// not unstructured's int64.
func jqValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jqValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jqValue(e)
		}
		return out
	case int64:
		return int(x)
	case int32:
		return int(x)
	case float32:
		return float64(x)
	}
	return v
}
