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
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	goyaml "go.yaml.in/yaml/v2"
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

// plainSafe tells whether yaml.v2 certainly writes s plain: s reads back as
// a string (resolve in resolve.go finds no other tag: it starts with a
// letter and is not a boolean, or with "--" and a letter), and
// yaml_emitter_analyze_scalar finds no reason to quote it (no indicator,
// no leading or trailing space, only printable characters, no line break).
// When in doubt, false: scalarStyle asks yaml.v2.
func plainSafe(s string) bool {
	if s == "" {
		return false
	}
	switch c := s[0]; {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		if isKeyword(s) {
			return false
		}
	case c == '-':
		// "--flag": not a number, timestamp or base 60 float, and
		// not "---".
		if len(s) < 3 || s[1] != '-' || !isASCIILetter(s[2]) {
			return false
		}
	default:
		return false
	}
	for i, r := range s {
		switch {
		case r == ':' && (i+1 == len(s) || s[i+1] == ' '):
			return false // ": " and a final ":" are indicators
		case r == '#' && s[i-1] == ' ':
			return false // " #" starts a comment
		case r == ' ' && i+1 == len(s):
			return false
		case !printable(r), isBreak(r):
			return false // tabs, breaks, controls, emoji: quoted
		}
	}
	return true
}

// printable is yaml.v2's is_printable: what it writes unescaped. Not tabs,
// and not emoji (past U+FFFF).
func printable(r rune) bool {
	return r == '\n' || r >= 0x20 && r <= 0x7e || r >= 0xa0 && r <= 0xd7ff || r >= 0xe000 && r <= 0xfffd && r != 0xfeff
}

// isBreak is yaml.v2's is_break.
func isBreak(r rune) bool {
	return r == '\n' || r == '\r' || r == 0x85 || r == 0x2028 || r == 0x2029
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// isKeyword tells whether s is one of the words yaml.v2 reads as a boolean
// or null (resolveMapList in resolve.go; its other entries do not start
// with a letter). Other strings starting with a letter are strings.
func isKeyword(s string) bool {
	switch s {
	case "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON",
		"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF",
		"null", "Null", "NULL":
		return true
	}
	return false
}

// plain writes s unquoted, breaking it as yaml_emitter_write_plain_scalar
// does: at a single space reached past column 80, going on at indent.
func (e *yamlEmitter) plain(s string, indent int) {
	if e.col+len(s) <= bestWidth+1 {
		e.text(s) // no space can sit past column 80
		return
	}
	spaces := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' {
			// plain strings never end with a space: s[i+1] exists.
			if !spaces && e.col > bestWidth && s[i+1] != ' ' {
				e.wrap(indent)
			} else {
				e.buf = append(e.buf, ' ')
				e.col++
			}
			spaces = true
			continue
		}
		e.char(c)
		spaces = false
	}
}

// singleQuoted writes s in single quotes as
// yaml_emitter_write_single_quoted_scalar does: quotes doubled, and (for a
// value) broken at a single space past column 80 but the first and last.
func (e *yamlEmitter) singleQuoted(s string, indent int, breaks bool) {
	e.buf = append(e.buf, '\'')
	e.col++
	spaces := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' {
			if breaks && !spaces && e.col > bestWidth && i > 0 && i < len(s)-1 && s[i+1] != ' ' {
				e.wrap(indent)
			} else {
				e.buf = append(e.buf, ' ')
				e.col++
			}
			spaces = true
			continue
		}
		if c == '\'' {
			e.buf = append(e.buf, '\'')
			e.col++
		}
		e.char(c)
		spaces = false
	}
	e.buf = append(e.buf, '\'')
	e.col++
}

// multiLineStyle returns the style yaml.v2 writes a string holding "\n"
// in: a literal block ('|'), which its stringv asks for, unless
// yaml_emitter_analyze_scalar forbids a block (a space before a break or
// at the end, a character it escapes) and it double-quotes ('"'); or 0
// where the block would hold line breaks other than "\n".
func multiLineStyle(s string) byte {
	quote, other, space := false, false, false
	for _, r := range s {
		if !printable(r) { // "\r" too
			quote = true
		}
		if isBreak(r) {
			quote = quote || space
			other = other || r != '\n'
		}
		space = r == ' '
	}
	switch {
	case quote || space:
		return '"'
	case other:
		return 0
	}
	return '|'
}

// doubleQuoted writes s in double quotes as
// yaml_emitter_write_double_quoted_scalar does: escaping what is not
// printable, breaks, quotes and backslashes, and (for a value) breaking the
// line at a single space past column 80 but the first and last, with a
// backslash when a space follows.
func (e *yamlEmitter) doubleQuoted(s string, indent int, breaks bool) {
	e.buf = append(e.buf, '"')
	e.col++
	spaces := false
	for i, r := range s {
		switch {
		case !printable(r) || isBreak(r) || r == '"' || r == '\\':
			e.escape(r)
			spaces = false
		case r == ' ':
			if breaks && !spaces && e.col > bestWidth && i > 0 && i < len(s)-1 {
				e.wrap(indent)
				if s[i+1] == ' ' {
					e.ascii("\\")
				}
			} else {
				e.ascii(" ")
			}
			spaces = true
		default:
			e.buf = utf8.AppendRune(e.buf, r)
			e.col++
			spaces = false
		}
	}
	e.buf = append(e.buf, '"')
	e.col++
}

// shortEscapes are yaml.v2's one-letter escapes in double quotes.
var shortEscapes = map[rune]byte{0: '0', 0x07: 'a', 0x08: 'b', 0x09: 't', 0x0a: 'n', 0x0b: 'v', 0x0c: 'f',
	0x0d: 'r', 0x1b: 'e', '"': '"', '\\': '\\', 0x85: 'N', 0xa0: '_', 0x2028: 'L', 0x2029: 'P'}

// escape writes r as yaml.v2 escapes it in double quotes: a letter, or
// \xXX, \uXXXX or \UXXXXXXXX in upper case.
func (e *yamlEmitter) escape(r rune) {
	n := len(e.buf)
	e.buf = append(e.buf, '\\')
	if c, ok := shortEscapes[r]; ok {
		e.buf = append(e.buf, c)
	} else {
		letter, digits := byte('U'), 8
		if r <= 0xff {
			letter, digits = 'x', 2
		} else if r <= 0xffff {
			letter, digits = 'u', 4
		}
		e.buf = append(e.buf, letter)
		for k := (digits - 1) * 4; k >= 0; k -= 4 {
			e.buf = append(e.buf, "0123456789ABCDEF"[r>>k&0xf])
		}
	}
	e.col += len(e.buf) - n
}

// literal writes s as a literal block, as yaml_emitter_write_literal_scalar
// does.
func (e *yamlEmitter) literal(s string, indent int) {
	e.buf = append(e.buf, '|')
	// yaml_emitter_write_block_scalar_hints: an indentation indicator when
	// the text starts with a space or break; "-" to strip a missing final
	// break, "+" to keep more than one.
	if s[0] == ' ' || s[0] == '\n' {
		e.buf = append(e.buf, '2')
	}
	switch {
	case s[len(s)-1] != '\n':
		e.buf = append(e.buf, '-')
	case len(s) == 1 || s[len(s)-2] == '\n':
		e.buf = append(e.buf, '+')
	}
	e.buf = append(e.buf, '\n')
	for rest := s; rest != ""; {
		line, after, found := strings.Cut(rest, "\n")
		e.col = 0
		if line != "" {
			e.pad(indent)
			e.text(line)
		}
		if found {
			e.buf = append(e.buf, '\n')
			e.col = 0
		}
		rest = after
	}
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

// styleCache holds yaml.v2's choice of quote for strings, found by
// encoding each string alone: a single or double quote, 0 for plain, '?'
// for other outputs. It is shared by the goroutines comparing objects and
// emptied when it passes styleCacheMax entries, so that it stays small.
var (
	styleCache    sync.Map // string → byte
	styleCacheLen atomic.Int64
	styleCacheMax int64 = 1 << 14
)

// scalarStyle returns the quote yaml.v2 writes the single-line string s
// in, or 0 for none. The choice (stringv, yaml_emitter_select_scalar_style)
// depends on s alone, but for simple keys that are empty or multi-line
// (handled elsewhere); only the place of the text, and so its wrapping,
// depends on the context, and the writers handle that.
func scalarStyle(s string) (quote byte, ok bool) {
	if v, found := styleCache.Load(s); found {
		quote = v.(byte)
		return quote, quote != '?'
	}
	quote = '?'
	if out, err := goyaml.Marshal(s); err == nil {
		switch out[0] {
		case '\'', '"':
			quote = out[0]
		case '|', '>', '!':
			// a block or a tag: not expected for a line
		default:
			quote = 0
		}
	}
	if styleCacheLen.Add(1) > styleCacheMax {
		styleCache.Clear()
		styleCacheLen.Store(0)
	}
	styleCache.Store(s, quote)
	return quote, quote != '?'
}

// keyList sorts map keys as yaml.v2's keyList.Less (sorter.go) sorts
// string keys: letters after other characters, runs of digits compared as
// numbers. Ported from go.yaml.in/yaml/v2 v2.4.4, (c) Canonical Ltd. and
// the go-yaml authors, licensed under the Apache License 2.0 (the MIT
// license covers the parts ported from libyaml). The order is not always
// transitive (with leading zeros: "a0a" < "a1" < "a01" < "a0a"), so for such
// keys yaml.v2's output depends on the map's iteration order; using
// sort.Sort on keys in iteration order, as yaml.v2 does, gives one of the
// outputs yaml.v2 can give.
type keyList []string

func (l keyList) Len() int           { return len(l) }
func (l keyList) Swap(i, j int)      { l[i], l[j] = l[j], l[i] }
func (l keyList) Less(i, j int) bool { return keyLess(l[i], l[j]) }

// keyLess walks runes where yaml.v2 converts both keys to []rune.
func keyLess(a, b string) bool {
	// nonZero: the digits ending the common prefix include one other than
	// '0' (yaml.v2 looks back for it when a '0' follows).
	nonZero := false
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ra, wa := utf8.DecodeRuneInString(a[i:])
		rb, wb := utf8.DecodeRuneInString(b[j:])
		if ra == rb {
			if unicode.IsDigit(ra) {
				nonZero = nonZero || ra != '0'
			} else {
				nonZero = false
			}
			i, j = i+wa, j+wb
			continue
		}
		al, bl := unicode.IsLetter(ra), unicode.IsLetter(rb)
		if al && bl {
			return ra < rb
		}
		if al || bl {
			return bl
		}
		var an, bn int64
		if (ra == '0' || rb == '0') && nonZero {
			an, bn = 1, 1
		}
		an, alen := digitRun(a[i:], an)
		bn, blen := digitRun(b[j:], bn)
		if an != bn {
			return an < bn
		}
		if alen != blen {
			return alen < blen
		}
		return ra < rb
	}
	return i == len(a) && j < len(b)
}

// digitRun reads the digits starting s into n as yaml.v2 does (any Unicode
// digit, valued by its distance from '0') and returns n and their count.
func digitRun(s string, n int64) (int64, int) {
	count := 0
	for _, r := range s {
		if !unicode.IsDigit(r) {
			break
		}
		n = n*10 + int64(r-'0')
		count++
	}
	return n, count
}
