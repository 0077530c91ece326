package jsonmap

import (
	"fmt"

	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/kapply/kapply/internal/offswitch"
)

// on is false under KAPPLY_JSONMAP=off: Object decodes with apimachinery's
// json.Unmarshal and Append declines every value, so that its callers
// encode with encoding/json (or the dynamic client).
var on = !offswitch.Off("KAPPLY_JSONMAP")

// maxDepth is the nesting of arrays and objects encoding/json (and so
// apimachinery) accepts; deeper input is an error, not a stack overflow.
const maxDepth = 10000

// Error says why Object refused its input (malformed JSON, a number out
// of range, a value other than an object) and where: the offset of the
// byte where decoding stopped, the input's length when it ended too soon.
type Error struct {
	Offset int
	Msg    string
}

func (e *Error) Error() string { return fmt.Sprintf("%s at offset %d", e.Msg, e.Offset) }

// Object decodes a JSON object as apimachinery's json.Unmarshal(data, &m)
// does with m a map[string]any: numbers that are integers (no '.') and fit
// are int64, other numbers float64 (out of float64's range: an error);
// strings have invalid UTF-8 and lone surrogates replaced by U+FFFD; a
// duplicate key keeps its last value. The JSON null gives a nil map and
// no error, as apimachinery leaves m nil; any other non-object is an error.
func Object(data []byte) (map[string]any, error) {
	if !on {
		var m map[string]any
		return m, utiljson.Unmarshal(data, &m)
	}
	d := newDecoder(data)
	defer d.release()
	d.skipSpace()
	start := d.pos
	v, err := d.document()
	if err != nil {
		return nil, err
	}
	return asObject(v, start)
}

// asObject is the top-level value v, which started at offset start, as
// an object.
func asObject(v any, start int) (map[string]any, error) {
	switch v := v.(type) {
	case map[string]any:
		return v, nil
	case nil:
		return nil, nil
	default:
		return nil, &Error{Offset: start, Msg: fmt.Sprintf("cannot decode a JSON %s into an object", kind(v))}
	}
}

func kind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	default:
		return "number"
	}
}

// decoder reads one JSON document. kvs and elems are stacks of the
// members and elements read so far of the objects and arrays being
// decoded, innermost on top: each map and slice is made once its size is
// known, so none grows (growing a map rehashes it).
type decoder struct {
	data    []byte
	pos     int
	depth   int
	kvs     []member
	elems   []any
	buf     []byte // a string being unescaped
	strings stringCache
}

type member struct {
	key   string
	value any
}

// document decodes the one value data holds, with optional whitespace
// around it.
func (d *decoder) document() (any, error) {
	v, err := d.value()
	if err != nil {
		return nil, err
	}
	d.skipSpace()
	if d.pos < len(d.data) {
		return nil, d.unexpected("after top-level value")
	}
	return v, nil
}

func (d *decoder) skipSpace() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// value decodes the value at d.pos, after optional whitespace.
func (d *decoder) value() (any, error) {
	d.skipSpace()
	if d.pos >= len(d.data) {
		return nil, d.eof()
	}
	switch c := d.data[d.pos]; c {
	case '{':
		return d.object()
	case '[':
		return d.array()
	case '"':
		return d.string()
	case 't':
		return true, d.literal("true")
	case 'f':
		return false, d.literal("false")
	case 'n':
		return nil, d.literal("null")
	default:
		if c == '-' || '0' <= c && c <= '9' {
			return d.number()
		}
		return nil, d.unexpected("looking for beginning of value")
	}
}

// object decodes the object at d.pos (its '{').
func (d *decoder) object() (map[string]any, error) {
	if err := d.enter(); err != nil {
		return nil, err
	}
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		d.depth--
		return map[string]any{}, nil
	}
	base := len(d.kvs)
	for {
		d.skipSpace()
		if d.pos >= len(d.data) {
			return nil, d.eof()
		}
		if d.data[d.pos] != '"' {
			return nil, d.unexpected("looking for beginning of object key string")
		}
		key, err := d.string()
		if err != nil {
			return nil, err
		}
		d.skipSpace()
		if d.pos >= len(d.data) {
			return nil, d.eof()
		}
		if d.data[d.pos] != ':' {
			return nil, d.unexpected("after object key")
		}
		d.pos++
		v, err := d.value()
		if err != nil {
			return nil, err
		}
		d.kvs = append(d.kvs, member{key.(string), v})
		if !d.comma() {
			break
		}
	}
	if err := d.close('}', "after object key:value pair"); err != nil {
		return nil, err
	}
	m := make(map[string]any, len(d.kvs)-base)
	for _, kv := range d.kvs[base:] {
		m[kv.key] = kv.value // in order: a duplicate key keeps its last value
	}
	clear(d.kvs[base:]) // see release
	d.kvs = d.kvs[:base]
	return m, nil
}

// array decodes the array at d.pos (its '[').
func (d *decoder) array() ([]any, error) {
	if err := d.enter(); err != nil {
		return nil, err
	}
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		d.depth--
		return []any{}, nil // empty, not nil, as encoding/json gives
	}
	base := len(d.elems)
	for {
		v, err := d.value()
		if err != nil {
			return nil, err
		}
		d.elems = append(d.elems, v)
		if !d.comma() {
			break
		}
	}
	if err := d.close(']', "after array element"); err != nil {
		return nil, err
	}
	a := make([]any, len(d.elems)-base)
	copy(a, d.elems[base:])
	clear(d.elems[base:])
	d.elems = d.elems[:base]
	return a, nil
}

// enter steps into the array or object at d.pos.
func (d *decoder) enter() error {
	d.depth++
	if d.depth > maxDepth {
		return &Error{Offset: d.pos, Msg: fmt.Sprintf("exceeded max depth of %d", maxDepth)}
	}
	d.pos++
	return nil
}

// comma reads the ',' that may follow a member or element.
func (d *decoder) comma() bool {
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == ',' {
		d.pos++
		return true
	}
	return false
}

// close reads the closing byte of the array or object being decoded;
// context says where it is expected.
func (d *decoder) close(closing byte, context string) error {
	if d.pos >= len(d.data) {
		return d.eof()
	}
	if d.data[d.pos] != closing {
		return d.unexpected(context)
	}
	d.pos++
	d.depth--
	return nil
}

// literal reads word (true, false or null), whose first byte is at d.pos.
func (d *decoder) literal(word string) error {
	for i := range len(word) {
		if d.pos >= len(d.data) {
			return d.eof()
		}
		if d.data[d.pos] != word[i] {
			return d.unexpected(fmt.Sprintf("in literal %s (expecting %q)", word, word[i]))
		}
		d.pos++
	}
	return nil
}

func (d *decoder) eof() error {
	return &Error{Offset: len(d.data), Msg: "unexpected end of JSON input"}
}

// unexpected reports the byte at d.pos, found where context says.
func (d *decoder) unexpected(context string) error { return d.unexpectedAt(d.pos, context) }

func (d *decoder) unexpectedAt(i int, context string) error {
	return &Error{Offset: i, Msg: "invalid character " + describe(d.data[i]) + " " + context}
}

func describe(c byte) string {
	if ' ' <= c && c < 0x7f {
		return fmt.Sprintf("%q", rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}
