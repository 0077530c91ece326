package fieldpath

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The syntax Parse reads is the one Path.String prints:
//
//	spec.replicas                                       a field, dotted from the top
//	metadata.labels["app.kubernetes.io/name"]           a field whose name holds . [ ] = , " or a space, quoted (Go syntax)
//	spec.template.spec.containers[name=web].resources   an element of a keyed list, by its merge key
//	spec.ports[port=80,protocol=TCP]                    several keys, comma-separated
//	spec.containers[name="my,odd]name"].image           a key value holding , ] or ", quoted
//	metadata.finalizers[=example.com/cleanup]           an element of a list of plain values, by value
//
// A dot before a bracket is allowed too (`labels.["a.b"]`). Key values are
// text and match an element's value printed as text (ScalarText), so
// containerPort=80 matches the number 80. A parsed path never selects by
// position ([3]): positions shift when anyone adds an element.

// ErrInvalid is the cause of every Error.
var ErrInvalid = errors.New("invalid field path")

// Error reports a field path that does not parse, with the offset
// of the offending character.
type Error struct {
	Path   string
	Offset int
	Reason string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%v %q at offset %d: %s", ErrInvalid, e.Path, e.Offset, e.Reason)
}

func (e *Error) Unwrap() error { return ErrInvalid }

// Parse parses the syntax documented on Path.
func Parse(s string) (Path, error) {
	p := &pathParser{src: s}
	return p.parse()
}

// pathParser reads a field path left to right.
type pathParser struct {
	src string
	pos int
}

func (p *pathParser) fail(reason string, args ...any) error {
	return &Error{Path: p.src, Offset: p.pos, Reason: fmt.Sprintf(reason, args...)}
}

func (p *pathParser) parse() (Path, error) {
	if strings.TrimSpace(p.src) == "" {
		return nil, p.fail("empty path")
	}
	var path Path
	for p.pos < len(p.src) {
		step, err := p.step(len(path) == 0)
		if err != nil {
			return nil, err
		}
		path = append(path, step)
	}
	if !path[0].IsField() {
		return nil, &Error{Path: p.src, Reason: "a path starts with a field name, e.g. spec"}
	}
	return path, nil
}

// step reads one step: `.name`, `name` (first), `[...]` or `.[...]`.
func (p *pathParser) step(first bool) (Element, error) {
	if !first {
		if p.peek() == '.' {
			p.pos++
			if p.pos == len(p.src) {
				return Element{}, p.fail("path ends with a dot")
			}
		} else if p.peek() != '[' {
			return Element{}, p.fail("expected . or [ after a step, found %q", p.peek())
		}
	}
	if p.peek() == '[' {
		return p.bracket()
	}
	name := p.name()
	if name == "" {
		return Element{}, p.fail("empty field name")
	}
	return Field(name), nil
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
func (p *pathParser) bracket() (Element, error) {
	p.pos++ // [
	var step Element
	var err error
	switch c := p.peek(); {
	case c == '"':
		step, err = p.quotedField()
	case c == '=':
		p.pos++
		step, err = p.setValue()
	case c >= '0' && c <= '9':
		return Element{}, p.fail("list elements are chosen by key ([name=web]) or value ([=x]), not by position")
	default:
		step, err = p.keys()
	}
	if err != nil {
		return Element{}, err
	}
	if p.peek() != ']' {
		return Element{}, p.fail("expected ] to close the bracket")
	}
	p.pos++
	return step, nil
}

func (p *pathParser) quotedField() (Element, error) {
	name, err := p.quoted()
	if err != nil {
		return Element{}, err
	}
	if name == "" {
		return Element{}, p.fail("empty field name")
	}
	return Field(name), nil
}

func (p *pathParser) setValue() (Element, error) {
	v, err := p.value()
	if err != nil {
		return Element{}, err
	}
	return Value(v), nil
}

// keys reads key=value pairs separated by commas.
func (p *pathParser) keys() (Element, error) {
	var kvs []KeyValue
	for {
		name := p.name()
		if name == "" {
			return Element{}, p.fail("expected a key name, as in [name=web]")
		}
		if p.peek() != '=' {
			return Element{}, p.fail("expected = after key %q, as in [%s=web]", name, name)
		}
		p.pos++
		v, err := p.value()
		if err != nil {
			return Element{}, err
		}
		kvs = append(kvs, KeyValue{Name: name, Value: v})
		if p.peek() != ',' {
			return Key(kvs), nil
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
