package lastapplied

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// FieldPath names one field of an object, or one element of a list, for
// `kapply release --field`. The syntax is the one `kapply diff --explain`
// prints (pkg/merge Path.String):
//
//	spec.replicas                                       a field, dotted from the top
//	metadata.labels["app.kubernetes.io/name"]           a field whose name holds . [ ] = , or a space, quoted (Go syntax)
//	spec.template.spec.containers[name=web].resources   an element of a keyed list, by its merge key
//	spec.ports[port=80,protocol=TCP]                    several keys, comma-separated
//	spec.containers[name="my,odd]name"].image           a key value holding , or ], quoted
//	metadata.finalizers[=example.com/cleanup]           an element of a list of plain values, by value
//
// A dot before a bracket is allowed too (`labels.["a.b"]`).
// Key values match the element's value printed as text, so containerPort=80
// matches the number 80. Elements are never chosen by position: positions
// shift when anyone adds an element.
type FieldPath []FieldStep

// FieldStep is one step of a FieldPath: a map field (Field), an element of a
// keyed list (Keys) or an element of a list of plain values (Value).
type FieldStep struct {
	Field string
	Keys  []KeyMatch
	Value *string
}

// KeyMatch is one key field of a keyed-list element and the value it must
// have, as text.
type KeyMatch struct {
	Name  string
	Value string
}

// ErrInvalidFieldPath is the cause of every FieldPathError.
var ErrInvalidFieldPath = errors.New("invalid field path")

// FieldPathError reports a field path that does not parse, with the offset
// of the offending character.
type FieldPathError struct {
	Path   string
	Offset int
	Reason string
}

func (e *FieldPathError) Error() string {
	return fmt.Sprintf("%v %q at offset %d: %s", ErrInvalidFieldPath, e.Path, e.Offset, e.Reason)
}

func (e *FieldPathError) Unwrap() error { return ErrInvalidFieldPath }

// ParseFieldPath parses the syntax documented on FieldPath.
func ParseFieldPath(s string) (FieldPath, error) {
	p := &pathParser{src: s}
	return p.parse()
}

// pathParser reads a field path left to right.
type pathParser struct {
	src string
	pos int
}

func (p *pathParser) fail(reason string, args ...any) error {
	return &FieldPathError{Path: p.src, Offset: p.pos, Reason: fmt.Sprintf(reason, args...)}
}

func (p *pathParser) parse() (FieldPath, error) {
	if strings.TrimSpace(p.src) == "" {
		return nil, p.fail("empty path")
	}
	var path FieldPath
	for p.pos < len(p.src) {
		step, err := p.step(len(path) == 0)
		if err != nil {
			return nil, err
		}
		path = append(path, step)
	}
	if path[0].Field == "" {
		return nil, &FieldPathError{Path: p.src, Reason: "a path starts with a field name, e.g. spec"}
	}
	return path, nil
}

// step reads one step: `.name`, `name` (first), `[...]` or `.[...]`.
func (p *pathParser) step(first bool) (FieldStep, error) {
	if !first {
		if p.peek() == '.' {
			p.pos++
			if p.pos == len(p.src) {
				return FieldStep{}, p.fail("path ends with a dot")
			}
		} else if p.peek() != '[' {
			return FieldStep{}, p.fail("expected . or [ after a step, found %q", p.peek())
		}
	}
	if p.peek() == '[' {
		return p.bracket()
	}
	name := p.name()
	if name == "" {
		return FieldStep{}, p.fail("empty field name")
	}
	return FieldStep{Field: name}, nil
}

func (p *pathParser) peek() byte {
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

// name reads an unquoted field name, up to the next separator.
func (p *pathParser) name() string {
	start := p.pos
	for p.pos < len(p.src) && !strings.ContainsRune(".[]=,\" ", rune(p.src[p.pos])) {
		p.pos++
	}
	return p.src[start:p.pos]
}

// bracket reads `["field"]`, `[=value]` or `[key=value,...]`.
func (p *pathParser) bracket() (FieldStep, error) {
	p.pos++ // [
	var step FieldStep
	var err error
	switch c := p.peek(); {
	case c == '"':
		step, err = p.quotedField()
	case c == '=':
		p.pos++
		step, err = p.setValue()
	case c >= '0' && c <= '9':
		return FieldStep{}, p.fail("list elements are chosen by key ([name=web]) or value ([=x]), not by position")
	default:
		step, err = p.keys()
	}
	if err != nil {
		return FieldStep{}, err
	}
	if p.peek() != ']' {
		return FieldStep{}, p.fail("expected ] to close the bracket")
	}
	p.pos++
	return step, nil
}

func (p *pathParser) quotedField() (FieldStep, error) {
	name, err := p.quoted()
	if err != nil {
		return FieldStep{}, err
	}
	if name == "" {
		return FieldStep{}, p.fail("empty field name")
	}
	return FieldStep{Field: name}, nil
}

func (p *pathParser) setValue() (FieldStep, error) {
	v, err := p.value()
	if err != nil {
		return FieldStep{}, err
	}
	return FieldStep{Value: &v}, nil
}

// keys reads key=value pairs separated by commas.
func (p *pathParser) keys() (FieldStep, error) {
	var step FieldStep
	for {
		name := p.name()
		if name == "" {
			return FieldStep{}, p.fail("expected a key name, as in [name=web]")
		}
		if p.peek() != '=' {
			return FieldStep{}, p.fail("expected = after key %q, as in [%s=web]", name, name)
		}
		p.pos++
		v, err := p.value()
		if err != nil {
			return FieldStep{}, err
		}
		step.Keys = append(step.Keys, KeyMatch{Name: name, Value: v})
		if p.peek() != ',' {
			return step, nil
		}
		p.pos++
	}
}

// value reads a key or set value: quoted, or up to , or ].
func (p *pathParser) value() (string, error) {
	if p.peek() == '"' {
		return p.quoted()
	}
	start := p.pos
	for p.pos < len(p.src) && p.src[p.pos] != ',' && p.src[p.pos] != ']' {
		p.pos++
	}
	if p.pos == start {
		return "", p.fail("empty value")
	}
	return p.src[start:p.pos], nil
}

// quoted reads a Go double-quoted string.
func (p *pathParser) quoted() (string, error) {
	start := p.pos
	for p.pos++; p.pos < len(p.src); p.pos++ {
		switch p.src[p.pos] {
		case '\\':
			p.pos++
		case '"':
			p.pos++
			s, err := strconv.Unquote(p.src[start:p.pos])
			if err != nil {
				p.pos = start
				return "", p.fail("bad quoted string: %v", err)
			}
			return s, nil
		}
	}
	p.pos = start
	return "", p.fail("unterminated quoted string")
}

// String prints the path in the syntax ParseFieldPath reads.
func (fp FieldPath) String() string {
	var b strings.Builder
	for i, s := range fp {
		b.WriteString(s.string(i == 0))
	}
	return b.String()
}

func (s FieldStep) string(first bool) string {
	switch {
	case s.Value != nil:
		return "[=" + quoteValue(*s.Value) + "]"
	case s.Keys != nil:
		parts := make([]string, len(s.Keys))
		for i, k := range s.Keys {
			parts[i] = k.Name + "=" + quoteValue(k.Value)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case strings.ContainsAny(s.Field, ".[]=,\" "):
		return "[" + strconv.Quote(s.Field) + "]"
	case first:
		return s.Field
	}
	return "." + s.Field
}

func quoteValue(v string) string {
	if v == "" || strings.ContainsAny(v, ",]\"") {
		return strconv.Quote(v)
	}
	return v
}

// ErrFieldNotFound reports a path that names nothing in the object.
var ErrFieldNotFound = errors.New("field not found")

// Lookup returns the value at the path in obj.
func (fp FieldPath) Lookup(obj map[string]any) (any, error) {
	var cur any = obj
	for i, s := range fp {
		next, _, err := s.child(cur)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", fp[:i+1], err)
		}
		cur = next
	}
	return cur, nil
}

// Remove deletes the field or element at the path from obj, then the maps
// and lists the removal left empty: an empty map left in a last-applied
// record would make the next apply delete every live entry of it.
func (fp FieldPath) Remove(obj map[string]any) error {
	if len(fp) == 0 {
		return fmt.Errorf("removing the whole object: %w", ErrInvalidFieldPath)
	}
	_, err := fp.removeAt(obj, 0)
	return err
}

// removeAt returns cur without the path from step i on.
func (fp FieldPath) removeAt(cur any, i int) (any, error) {
	child, idx, err := fp[i].child(cur)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", fp[:i+1], err)
	}
	keep := false
	if i < len(fp)-1 {
		if child, err = fp.removeAt(child, i+1); err != nil {
			return nil, err
		}
		keep = !isEmpty(child)
	}
	switch c := cur.(type) {
	case map[string]any:
		if keep {
			c[fp[i].Field] = child
		} else {
			delete(c, fp[i].Field)
		}
		return c, nil
	case []any:
		if keep {
			c[idx] = child
			return c, nil
		}
		return append(c[:idx], c[idx+1:]...), nil
	}
	return cur, nil
}

func isEmpty(v any) bool {
	switch c := v.(type) {
	case map[string]any:
		return len(c) == 0
	case []any:
		return len(c) == 0
	}
	return false
}

// child returns the value a step selects under cur and, for a list
// element, its index.
func (s FieldStep) child(cur any) (any, int, error) {
	if s.Keys == nil && s.Value == nil {
		return s.field(cur)
	}
	list, ok := cur.([]any)
	if !ok {
		return nil, 0, fmt.Errorf("the parent is not a list, so %s selects nothing: %w", s.string(false), ErrFieldNotFound)
	}
	found := -1
	for i, elem := range list {
		if !s.matches(elem) {
			continue
		}
		if found >= 0 {
			return nil, 0, fmt.Errorf("several list elements match; name more keys: %w", ErrInvalidFieldPath)
		}
		found = i
	}
	if found < 0 {
		return nil, 0, fmt.Errorf("no list element matches: %w", ErrFieldNotFound)
	}
	return list[found], found, nil
}

func (s FieldStep) field(cur any) (any, int, error) {
	m, ok := cur.(map[string]any)
	if !ok {
		if _, isList := cur.([]any); isList {
			return nil, 0, fmt.Errorf("the parent is a list: select an element with [key=value] before .%s: %w", s.Field, ErrFieldNotFound)
		}
		return nil, 0, fmt.Errorf("the parent is not an object: %w", ErrFieldNotFound)
	}
	v, ok := m[s.Field]
	if !ok {
		return nil, 0, ErrFieldNotFound
	}
	return v, 0, nil
}

func (s FieldStep) matches(elem any) bool {
	if s.Value != nil {
		return scalarText(elem) == *s.Value
	}
	m, ok := elem.(map[string]any)
	if !ok {
		return false
	}
	for _, k := range s.Keys {
		v, ok := m[k.Name]
		if !ok || scalarText(v) != k.Value {
			return false
		}
	}
	return true
}

func scalarText(v any) string {
	switch v.(type) {
	case map[string]any, []any:
		return "\x00" // never equal to text
	}
	return fmt.Sprint(v)
}
