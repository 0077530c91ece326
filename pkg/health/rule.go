package health

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
	kyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kapply/kapply/internal/yamldoc"
)

// Rule is one entry of a health file: for the objects of APIVersion and
// Kind, the CEL expressions that say they are in progress, failed or
// current (Flux's CustomHealthCheck). Current is required; the others may
// be empty.
type Rule struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Current    string `json:"current"`
	InProgress string `json:"inProgress,omitempty"`
	Failed     string `json:"failed,omitempty"`
}

// The Flux Kustomization whose spec.healthCheckExprs a health file may be.
const (
	fluxKustomizationAPIVersion = "kustomize.toolkit.fluxcd.io/v1"
	fluxKustomizationKind       = "Kustomization"
)

// RuleError is a rule that cannot be used: its place in the file, its
// apiVersion and kind (as written), the field at fault and why.
type RuleError struct {
	// Path is where the rule is: "[2]" in a list, or
	// "spec.healthCheckExprs[2]" in a Kustomization.
	Path             string
	APIVersion, Kind string
	// Field is the rule's field at fault ("current", "apiVersion"...), or
	// "" when the entry as a whole is.
	Field string
	Err   error
}

func (e *RuleError) Error() string {
	where := "health rule " + e.Path
	if e.APIVersion != "" || e.Kind != "" {
		where += fmt.Sprintf(" (%s %s)", e.APIVersion, e.Kind)
	}
	if e.Field != "" {
		where += " " + e.Field
	}
	return where + ": " + e.Err.Error()
}

func (e *RuleError) Unwrap() error { return e.Err }

// Parse reads a health file: a YAML (or JSON) list of rules, or a Flux
// Kustomization (kustomize.toolkit.fluxcd.io/v1) whose
// spec.healthCheckExprs holds them. It refuses an entry with a field it
// does not know (a misspelt "inprogress" would silently never match), one
// without apiVersion, kind or current, an apiVersion it cannot read, and
// a second rule for a group and kind (Flux keys rules by group and kind;
// the version does not count). The caller names the file.
func Parse(data []byte) ([]Rule, error) {
	doc, err := oneDocument(data)
	if err != nil {
		return nil, err
	}
	var top any
	if err := yaml.Unmarshal(doc, &top); err != nil {
		return nil, fmt.Errorf("reading the health rules: %w", err)
	}
	var entries []any
	prefix := ""
	switch doc := top.(type) {
	case []any:
		entries = doc
	case map[string]any:
		var err error
		if entries, err = kustomizationEntries(doc); err != nil {
			return nil, err
		}
		prefix = "spec.healthCheckExprs"
	default:
		return nil, errors.New("the health rules are neither a list of rules nor a Flux Kustomization (" + fluxKustomizationAPIVersion + ")")
	}
	if len(entries) == 0 {
		return nil, errors.New("the health file holds no rule")
	}
	rules := make([]Rule, 0, len(entries))
	for i, entry := range entries {
		r, err := parseEntry(entry, fmt.Sprintf("%s[%d]", prefix, i))
		if err != nil {
			return nil, err
		}
		rules = append(rules, r)
	}
	if err := refuseDuplicates(rules, prefix); err != nil {
		return nil, err
	}
	return rules, nil
}

// oneDocument is the file's one YAML document: YAML decoding would read
// the first and drop the others unseen, and which Kustomization of
// several was meant cannot be told.
func oneDocument(data []byte) ([]byte, error) {
	reader := kyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading the health rules: %w", err)
		}
		if !yamldoc.IsEmpty(doc) {
			docs = append(docs, doc)
		}
	}
	if len(docs) > 1 {
		return nil, fmt.Errorf("the health file holds %d YAML documents: one is read, a list of rules or a Flux Kustomization", len(docs))
	}
	if len(docs) == 0 {
		return nil, errors.New("the health file holds no rule")
	}
	return docs[0], nil
}

// kustomizationEntries is spec.healthCheckExprs of a Flux Kustomization.
func kustomizationEntries(doc map[string]any) ([]any, error) {
	apiVersion, _ := doc["apiVersion"].(string)
	kind, _ := doc["kind"].(string)
	if kind != fluxKustomizationKind || apiVersion != fluxKustomizationAPIVersion {
		return nil, fmt.Errorf("the health file is a %s %s, not a list of rules nor a Flux Kustomization (%s)",
			quoteOrNone(apiVersion), quoteOrNone(kind), fluxKustomizationAPIVersion)
	}
	spec, _ := doc["spec"].(map[string]any)
	exprs, found := spec["healthCheckExprs"]
	if !found {
		return nil, errors.New("the Kustomization has no spec.healthCheckExprs")
	}
	entries, ok := exprs.([]any)
	if !ok {
		return nil, errors.New("the Kustomization's spec.healthCheckExprs is not a list")
	}
	return entries, nil
}

func quoteOrNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return fmt.Sprintf("%q", s)
}

// parseEntry decodes one rule strictly and checks its required fields.
func parseEntry(entry any, path string) (Rule, error) {
	fields, ok := entry.(map[string]any)
	if !ok {
		return Rule{}, &RuleError{Path: path, Err: errors.New("is not a map of apiVersion, kind, current, inProgress and failed")}
	}
	// What the entry says it is, for the errors, before strict decoding.
	apiVersion, _ := fields["apiVersion"].(string)
	kind, _ := fields["kind"].(string)
	fail := func(field string, err error) error {
		return &RuleError{Path: path, APIVersion: apiVersion, Kind: kind, Field: field, Err: err}
	}
	var r Rule
	// Decoded by hand: encoding/json matches field names ignoring case
	// (a misspelt "inprogress" would be taken), and sigs.k8s.io/yaml turns
	// a YAML bool into a string field's "true".
	targets := map[string]*string{"apiVersion": &r.APIVersion, "kind": &r.Kind, "current": &r.Current,
		"inProgress": &r.InProgress, "failed": &r.Failed}
	for _, key := range slices.Sorted(maps.Keys(fields)) {
		target := targets[key]
		if target == nil {
			return Rule{}, fail(key, errors.New("is not a field of a health rule (apiVersion, kind, current, inProgress, failed)"))
		}
		value, isString := fields[key].(string)
		if !isString {
			return Rule{}, fail(key, errors.New("is not a string (quote the expression)"))
		}
		*target = value
	}
	for _, f := range []struct{ name, value string }{{"apiVersion", r.APIVersion}, {"kind", r.Kind}, {"current", r.Current}} {
		if f.value == "" {
			return Rule{}, fail(f.name, errors.New("is required"))
		}
	}
	if _, err := schema.ParseGroupVersion(r.APIVersion); err != nil {
		return Rule{}, fail("apiVersion", errors.New("is not group/version nor version"))
	}
	return r, nil
}

// groupKind is what a rule is for: Flux matches an object to a rule by
// group and kind, whatever the version.
func (r Rule) groupKind() schema.GroupKind {
	return schema.FromAPIVersionAndKind(r.APIVersion, r.Kind).GroupKind()
}

func refuseDuplicates(rules []Rule, prefix string) error {
	first := map[schema.GroupKind]int{}
	for i, r := range rules {
		gk := r.groupKind()
		if j, seen := first[gk]; seen {
			return &RuleError{Path: fmt.Sprintf("%s[%d]", prefix, i), APIVersion: r.APIVersion, Kind: r.Kind,
				Err: fmt.Errorf("is a second rule for %s (the first is %s[%d]); one rule per group and kind", gk, prefix, j)}
		}
		first[gk] = i
	}
	return nil
}
