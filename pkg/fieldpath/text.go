package fieldpath

import (
	"encoding/json"
	"strconv"
	"strings"

	sigsjson "sigs.k8s.io/json"
)

// Text is the path in a form ParseText gives back exactly, for a saved
// plan: String's syntax, with typed values. String prints every key and
// set value as text, so that a person's [port=80] matches the number 80
// and the string "80" alike (release, ignore rules); a plan must tell them
// apart, and keep positions, which Parse refuses from a person:
//
//	spec.ports[port=80,protocol=TCP]      the number 80, the string TCP
//	spec.containers[name="80"]            the string "80" (quoted: it reads as a number)
//	spec.x[a=80.0]                        the float 80 (a float always has a point or exponent)
//	spec.x[a=true] spec.x[a=null]         a bool; null
//	metadata.finalizers[=example.com/a]   an element of a set, by value
//	spec.args[3]                          position 3 of an atomic list
//	spec.x[={"a":1}]                      a map or list value, as JSON
//	["a.b"]["c"="d"]                      a field or key name holding a separator, quoted
//
// A string is bare when it holds no separator, shows as itself and does
// not read as another literal; otherwise Go-quoted. The empty path is "".
func (p Path) Text() string {
	var b strings.Builder
	for i, e := range p {
		switch e.kind {
		case keyElement:
			b.WriteByte('[')
			for j, kv := range e.Keys {
				if j > 0 {
					b.WriteByte(',')
				}
				b.WriteString(nameText(kv.Name))
				b.WriteByte('=')
				b.WriteString(valueText(kv.Value))
			}
			b.WriteByte(']')
		case valueElement:
			b.WriteString("[=" + valueText(e.Value) + "]")
		case indexElement:
			b.WriteString("[" + strconv.Itoa(e.Index) + "]")
		default:
			switch {
			case !bareName(e.Field):
				b.WriteString("[" + strconv.Quote(e.Field) + "]")
			case i > 0:
				b.WriteString("." + e.Field)
			default:
				b.WriteString(e.Field)
			}
		}
	}
	return b.String()
}

// separators end a bare name or value.
const separators = ".[]=,\" "

// bareName: a field or key name written as it is.
func bareName(s string) bool {
	return s != "" && !strings.ContainsAny(s, separators) && !hasUnprintable(s)
}

func nameText(s string) string {
	if bareName(s) {
		return s
	}
	return strconv.Quote(s)
}

// valueText is a key or set value, typed (see Text).
func valueText(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		if x == "" || strings.ContainsAny(x, ",]\"") || strings.ContainsAny(x[:1], "{[ ") || hasUnprintable(x) {
			return strconv.Quote(x)
		}
		if _, isString := literal(x).(string); !isString {
			return strconv.Quote(x)
		}
		return x
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return floatText(x)
	case float32:
		return floatText(float64(x))
	}
	if i, ok := integer(v); ok {
		return strconv.FormatInt(i, 10)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return strconv.Quote(ScalarText(v))
	}
	return string(out)
}

// floatText always reads back as a float: 80.0, not 80 (an integer).
func floatText(f float64) string {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if _, isInt := literal(s).(int64); isInt {
		s += ".0"
	}
	return s
}

// literal reads a bare value: null, a bool, an integer (int64), a float
// (float64), else the text itself.
func literal(s string) any {
	switch s {
	case "null":
		return nil
	case "true":
		return true
	case "false":
		return false
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f
	}
	return s
}

// ParseText reads what Text writes.
func ParseText(s string) (Path, error) {
	p := &pathParser{src: s}
	var path Path
	for p.pos < len(p.src) {
		e, err := p.textStep(len(path) == 0)
		if err != nil {
			return nil, err
		}
		path = append(path, e)
	}
	return path, nil
}

func (p *pathParser) textStep(first bool) (Element, error) {
	if p.peek() == '[' {
		return p.textBracket()
	}
	if !first {
		if p.peek() != '.' {
			return Element{}, p.fail("expected . or [ after a step, found %q", p.peek())
		}
		p.pos++
	}
	name := p.name()
	if name == "" {
		return Element{}, p.fail("empty field name")
	}
	return Field(name), nil
}

// textBracket reads `["field"]`, `[3]`, `[=value]` or `[key=value,...]`.
func (p *pathParser) textBracket() (Element, error) {
	p.pos++ // [
	var e Element
	var err error
	if p.peek() == '=' {
		p.pos++
		var v any
		if v, err = p.typedValue(); err == nil {
			e = Value(v)
		}
	} else {
		e, err = p.textKeys()
	}
	if err != nil {
		return Element{}, err
	}
	if p.peek() != ']' {
		return Element{}, p.fail("expected ] to close the bracket")
	}
	p.pos++
	return e, nil
}

// textKeys reads a quoted field, a position or key=value pairs.
func (p *pathParser) textKeys() (Element, error) {
	var kvs []KeyValue
	for {
		quoted := p.peek() == '"'
		name, err := p.keyName()
		if err != nil {
			return Element{}, err
		}
		if len(kvs) == 0 && p.peek() == ']' {
			return p.fieldOrIndex(name, quoted)
		}
		if p.peek() != '=' {
			return Element{}, p.fail("expected = after key %q", name)
		}
		p.pos++
		v, err := p.typedValue()
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

func (p *pathParser) keyName() (string, error) {
	if p.peek() == '"' {
		return p.quoted()
	}
	if name := p.name(); name != "" {
		return name, nil
	}
	return "", p.fail("expected a name, a position or =")
}

// fieldOrIndex: ["name"] is a field, [3] a position.
func (p *pathParser) fieldOrIndex(name string, quoted bool) (Element, error) {
	if quoted {
		return Field(name), nil // "" too: JSON allows an empty member name
	}
	i, err := strconv.Atoi(name)
	if err != nil || i < 0 || strconv.Itoa(i) != name {
		return Element{}, p.fail("%q is no position (a field name in brackets is quoted)", name)
	}
	return Index(i), nil
}

// typedValue reads a quoted string, a JSON map or list, or a bare literal.
func (p *pathParser) typedValue() (any, error) {
	switch p.peek() {
	case '"':
		return p.quoted()
	case '{', '[':
		return p.jsonValue()
	}
	start := p.pos
	for p.pos < len(p.src) && p.src[p.pos] != ',' && p.src[p.pos] != ']' {
		p.pos++
	}
	if p.pos == start {
		return nil, p.fail("empty value")
	}
	return literal(p.src[start:p.pos]), nil
}

func (p *pathParser) jsonValue() (any, error) {
	dec := json.NewDecoder(strings.NewReader(p.src[p.pos:]))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return nil, p.fail("bad JSON value: %v", err)
	}
	var v any
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(raw, &v); err != nil {
		return nil, p.fail("bad JSON value: %v", err)
	}
	p.pos += int(dec.InputOffset()) // just past the value's } or ]
	return v, nil
}
