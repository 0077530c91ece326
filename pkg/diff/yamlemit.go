package diff

// A YAML emitter written by hand: a large diff spent a third of its time in
// yaml.v2's Marshal, mostly in reflection and its event machinery, and no
// library emits YAML without them. This one writes what yaml.v2 v2.4.4
// (go.yaml.in/yaml/v2) writes for the values toYAML encodes directly (see
// direct), mirroring its choices in encode.go, emitterc.go and sorter.go
// for a subset, and defers to yaml.v2 for the rest. Which quotes a string
// takes, unless it is plainly a plain string, yaml.v2 itself decides, once
// per string (see scalarStyle). Whatever this emitter does not handle it
// leaves to yaml.v2, for the whole object: keys longer than 128 bytes or
// spanning lines (written "? key"), and strings whose line breaks yaml.v2
// would write raw in quotes or a block (U+2028, U+2029, "\r" in a block).
// The differential tests in yamlemit_test.go hold it to yaml.v2's bytes.

import (
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

const (
	// bestWidth is yaml.v2's emitter.best_width: past this column it breaks
	// scalars at spaces. Nothing in this program calls FutureLineWrap.
	bestWidth = 80
	// maxSimpleKey is the longest key yaml.v2 writes as "key:" rather than
	// "? key" (yaml_emitter_check_simple_key).
	maxSimpleKey = 128
)

// yamlEmitter holds one encoding's state; emitters are pooled so that an
// encoding allocates little more than its result.
type yamlEmitter struct {
	buf []byte
	// col counts the characters (not bytes) since the last line break, as
	// yaml.v2 does, for its line wrapping.
	col int
	// keys is a stack of the keys of the maps being written; sorter sorts
	// the top map's share of it without boxing a slice for sort.Sort.
	keys   []string
	sorter keyList
}

var emitterPool = sync.Pool{New: func() any { return new(yamlEmitter) }}

// emitYAML returns the text of goyaml.Marshal(obj), or ok false where it is
// not sure to produce it. obj must pass direct: its strings are taken to be
// valid UTF-8, without a byte order mark.
func emitYAML(obj map[string]any) (out string, ok bool) {
	if obj == nil {
		return "", false
	}
	if len(obj) == 0 {
		return "{}\n", true
	}
	e := emitterPool.Get().(*yamlEmitter)
	defer e.release()
	if !e.mapping(obj, 0, false) {
		return "", false
	}
	e.lineBreak()
	return string(e.buf), true
}

func (e *yamlEmitter) release() {
	if cap(e.buf) > 1<<20 {
		e.buf = nil // let a huge object's buffer go
	}
	clear(e.keys[:cap(e.keys)]) // keep no strings alive
	e.buf, e.col, e.keys, e.sorter = e.buf[:0], 0, e.keys[:0], nil
	emitterPool.Put(e)
}

// mapping writes a non-empty map in block style at indent; inline tells
// that the first key goes on the current line (after "- ").
func (e *yamlEmitter) mapping(m map[string]any, indent int, inline bool) bool {
	start := len(e.keys)
	for k := range m {
		e.keys = append(e.keys, k)
	}
	e.sorter = e.keys[start:]
	sort.Sort(&e.sorter) // as yaml.v2 sorts: see keyList on its odd orders
	keys := e.keys[start:]
	for i, k := range keys {
		if i > 0 || !inline {
			e.newline(indent)
		}
		if !e.key(k) {
			return false
		}
		e.buf = append(e.buf, ':')
		e.col++
		if !e.node(m[k], indent, true) {
			return false
		}
	}
	e.keys = e.keys[:start]
	return true
}

// sequence writes a non-empty list in block style at indent.
func (e *yamlEmitter) sequence(list []any, indent int, inline bool) bool {
	for i, item := range list {
		if i > 0 || !inline {
			e.newline(indent)
		}
		e.buf = append(e.buf, '-')
		e.col++
		if !e.node(item, indent, false) {
			return false
		}
	}
	return true
}

// node writes a map value (inMap) or a list item after its ":" or "-";
// indent is that of the enclosing map or list.
func (e *yamlEmitter) node(v any, indent int, inMap bool) bool {
	switch x := v.(type) {
	case map[string]any:
		switch {
		case x == nil:
			return false // JSON and yaml.v2 disagree (see direct)
		case len(x) == 0:
			e.ascii(" {}")
			return true
		case inMap:
			return e.mapping(x, indent+2, false)
		}
		e.ascii(" ")
		return e.mapping(x, indent+2, true)
	case []any:
		switch {
		case x == nil:
			return false
		case len(x) == 0:
			e.ascii(" []")
			return true
		case inMap:
			// yaml.v2 does not indent a list under a key.
			return e.sequence(x, indent, false)
		}
		e.ascii(" ")
		return e.sequence(x, indent+2, true)
	}
	e.ascii(" ")
	return e.scalar(v, indent+2)
}

// scalar writes a value other than a map or list; indent is where yaml.v2
// continues it on a new line.
func (e *yamlEmitter) scalar(v any, indent int) bool {
	n := len(e.buf)
	switch x := v.(type) {
	case nil:
		e.buf = append(e.buf, "null"...)
	case bool:
		e.buf = strconv.AppendBool(e.buf, x)
	case int, int8, int16, int32, int64:
		e.buf = strconv.AppendInt(e.buf, reflect.ValueOf(x).Int(), 10)
	case uint, uint8, uint16, uint32, uint64:
		e.buf = strconv.AppendUint(e.buf, reflect.ValueOf(x).Uint(), 10)
	case string:
		return e.value(x, indent)
	default:
		return false // floats and the rest: not in the direct subset
	}
	e.col += len(e.buf) - n
	return true
}

// key writes a map key, which yaml.v2 writes as a "simple key": never
// wrapped, and only up to 128 bytes on one line.
func (e *yamlEmitter) key(s string) bool {
	if len(s) > maxSimpleKey {
		return false
	}
	if plainSafe(s) {
		e.text(s)
		return true
	}
	if strings.ContainsAny(s, "\r\n\u0085\u2028\u2029") {
		return false // a multi-line key: "? key"
	}
	switch quote, ok := scalarStyle(s); {
	case !ok:
		return false
	case quote == '\'':
		e.singleQuoted(s, 0, false)
	case quote == '"':
		e.doubleQuoted(s, 0, false)
	default:
		e.text(s)
	}
	return true
}

// value writes a string value, choosing its style as yaml.v2's stringv and
// yaml_emitter_select_scalar_style do.
func (e *yamlEmitter) value(s string, indent int) bool {
	if plainSafe(s) {
		e.plain(s, indent)
		return true
	}
	if strings.IndexByte(s, '\n') >= 0 {
		switch multiLineStyle(s) {
		case '|':
			e.literal(s, indent)
		case '"':
			e.doubleQuoted(s, indent, true)
		default:
			return false
		}
		return true
	}
	quote, ok := scalarStyle(s)
	if !ok || quote != '"' && strings.ContainsAny(s, "\r\u2028\u2029") {
		return false // line breaks written raw: not handled here
	}
	switch quote {
	case '\'':
		e.singleQuoted(s, indent, true)
	case '"':
		e.doubleQuoted(s, indent, true)
	default:
		e.plain(s, indent)
	}
	return true
}

// newline starts a line at indent, as yaml_emitter_write_indent does: a
// literal block may already have ended the line.
func (e *yamlEmitter) newline(indent int) {
	e.lineBreak()
	e.col = 0
	e.pad(indent)
}

func (e *yamlEmitter) lineBreak() {
	if len(e.buf) > 0 && e.buf[len(e.buf)-1] != '\n' {
		e.buf = append(e.buf, '\n')
	}
}

// wrap breaks a scalar: yaml_emitter_write_indent in the middle of a line.
func (e *yamlEmitter) wrap(indent int) {
	e.buf = append(e.buf, '\n')
	e.col = 0
	e.pad(indent)
}

func (e *yamlEmitter) pad(indent int) {
	for e.col < indent {
		e.buf = append(e.buf, ' ')
		e.col++
	}
}

// char writes one byte of a string, counting a character at its first byte.
func (e *yamlEmitter) char(c byte) {
	e.buf = append(e.buf, c)
	if c&0xc0 != 0x80 {
		e.col++
	}
}

func (e *yamlEmitter) text(s string) {
	e.buf = append(e.buf, s...)
	e.col += utf8.RuneCountInString(s)
}

func (e *yamlEmitter) ascii(s string) {
	e.buf = append(e.buf, s...)
	e.col += len(s)
}
