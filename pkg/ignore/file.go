package ignore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"

	yaml "go.yaml.in/yaml/v3"
)

// The rules file's apiVersion and kind.
const (
	APIVersion = "kapply.dev/v1alpha1"
	Kind       = "IgnoreRules"
)

// ruleKeys are the keys a rule may have; another is a mistake to report
// (a misspelt key would otherwise ignore nothing, silently).
var ruleKeys = []string{"group", "kind", "namespace", "name", "jsonPointers", "jqPathExpressions", "managedFieldsManagers"}

// LineError is a malformed rules file: the file and line of the mistake.
type LineError struct {
	File string
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// maxRulesFileSize bounds the rules file read: os.ReadFile reads a device
// to its end, and --ignore-file /dev/zero grew the process past 22 GB
// until the kernel killed it. A rules file holds a few hundred rules.
const maxRulesFileSize = 4 << 20

// ReadFile reads a rules file (see docs/ignore.md): a regular file, a
// FIFO or a device (/dev/stdin), up to maxRulesFileSize.
func ReadFile(name string) ([]*Rule, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("reading ignore rules: %w", err)
	}
	defer f.Close() //nolint:errcheck // read only
	data, err := io.ReadAll(io.LimitReader(f, maxRulesFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading ignore rules: %w", err)
	}
	if len(data) > maxRulesFileSize {
		return nil, fmt.Errorf("reading ignore rules: %s is larger than %d MiB, the most kapply reads from a rules file", name, maxRulesFileSize>>20)
	}
	return Parse(name, data)
}

// Parse reads the rules of a rules file named name; every rule is checked
// (pointers parse, jq compiles) and an error names name and the line.
func Parse(name string, data []byte) ([]*Rule, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, yamlError(name, err)
	}
	// A second document's rules would be dropped without a word.
	var next yaml.Node
	if err := dec.Decode(&next); err != nil && !errors.Is(err, io.EOF) {
		return nil, yamlError(name, err)
	} else if err == nil && len(next.Content) > 0 && next.Content[0].Tag != "!!null" {
		return nil, &LineError{File: name, Line: next.Content[0].Line, Err: fmt.Errorf("a second document: a rules file holds one (put every rule under its rules:)")}
	}
	if len(doc.Content) == 0 {
		return nil, &LineError{File: name, Line: 1, Err: fmt.Errorf("empty: expected apiVersion: %s, kind: %s, rules: [...]", APIVersion, Kind)}
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil, &LineError{File: name, Line: top.Line, Err: fmt.Errorf("expected a mapping with apiVersion, kind and rules")}
	}
	var rulesNode *yaml.Node
	seen := map[string]int{}
	for i := 0; i+1 < len(top.Content); i += 2 {
		key, value := top.Content[i], top.Content[i+1]
		// yaml.v3 checks duplicate keys only when it decodes into a map
		// or struct, not into a Node: a second rules: replaced the first,
		// whose rules were then dropped without a word.
		if first, dup := seen[key.Value]; dup {
			return nil, &LineError{File: name, Line: key.Line, Err: fmt.Errorf("mapping key %q already defined at line %d", key.Value, first)}
		}
		seen[key.Value] = key.Line
		switch key.Value {
		case "apiVersion":
			if value.Value != APIVersion {
				return nil, &LineError{File: name, Line: value.Line, Err: fmt.Errorf("apiVersion %q: expected %s", value.Value, APIVersion)}
			}
		case "kind":
			if value.Value != Kind {
				return nil, &LineError{File: name, Line: value.Line, Err: fmt.Errorf("kind %q: expected %s", value.Value, Kind)}
			}
		case "rules":
			rulesNode = value
		default:
			return nil, &LineError{File: name, Line: key.Line, Err: fmt.Errorf("unknown key %q (expected apiVersion, kind, rules)", key.Value)}
		}
	}
	if rulesNode == nil {
		return nil, &LineError{File: name, Line: top.Line, Err: fmt.Errorf("no rules: list")}
	}
	if rulesNode.Kind != yaml.SequenceNode {
		return nil, &LineError{File: name, Line: rulesNode.Line, Err: fmt.Errorf("rules must be a list")}
	}
	out := make([]*Rule, 0, len(rulesNode.Content))
	for _, n := range rulesNode.Content {
		r, err := decodeRule(name, n)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// decodeRule decodes and checks one rule node.
func decodeRule(name string, n *yaml.Node) (*Rule, error) {
	if err := checkRuleKeys(name, n); err != nil {
		return nil, err
	}
	r := &Rule{}
	if err := n.Decode(r); err != nil {
		return nil, yamlError(name, err)
	}
	r.Origin = fmt.Sprintf("%s:%d", name, n.Line)
	if err := r.compile(); err != nil {
		line := n.Line
		if bad, ok := errors.AsType[*valueError](err); ok {
			line = lineOf(n, bad.value, line)
		}
		return nil, &LineError{File: name, Line: line, Err: err}
	}
	return r, nil
}

// lineOf is the line of the first scalar under n whose value is value;
// otherwise line.
func lineOf(n *yaml.Node, value string, line int) int {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Value == value {
		return n.Line
	}
	for _, c := range n.Content {
		if l := lineOf(c, value, -1); l >= 0 {
			return l
		}
	}
	return line
}

// checkRuleKeys checks that n is a mapping of rule keys; an alias is its
// anchor's, and a merge key ("<<") brings keys that are checked too.
func checkRuleKeys(name string, n *yaml.Node) error {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		return &LineError{File: name, Line: n.Line, Err: fmt.Errorf("a rule must be a mapping")}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, value := n.Content[i], n.Content[i+1]
		if key.Value == "<<" && key.Tag == "!!merge" {
			merged := []*yaml.Node{value}
			if value.Kind == yaml.SequenceNode {
				merged = value.Content
			}
			for _, m := range merged {
				if err := checkRuleKeys(name, m); err != nil {
					return err
				}
			}
			continue
		}
		if !slices.Contains(ruleKeys, key.Value) {
			return &LineError{File: name, Line: key.Line, Err: fmt.Errorf("unknown key %q in a rule (expected one of %v)", key.Value, ruleKeys)}
		}
	}
	return nil
}

// yamlLine is the line yaml.v3 puts in its messages ("yaml: line 3: ...",
// "line 3: cannot unmarshal ...").
var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// yamlError is a YAML error as a LineError of the file.
func yamlError(name string, err error) error {
	text := err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		text = te.Errors[0]
	}
	if m := yamlLine.FindStringSubmatch(text); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &LineError{File: name, Line: line, Err: errors.New(m[2])}
	}
	return fmt.Errorf("%s: %w", name, err)
}
