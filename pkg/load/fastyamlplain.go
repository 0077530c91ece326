package load

// The plain and literal block scalars fastYAML follows, and how their text
// resolves to a value (fastyaml.go).

import (
	"bytes"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v2"
)

// literal reads a literal block scalar (| or |-, text is its header) as
// yaml_parser_scan_block_scalar does: its lines are those after the
// header that are blank or indented as its first line, which must be right
// of parent, the column of the collection holding it. The scalar is those
// lines less that indentation, each ending in a line break but the last,
// which keeps its own with | (clip) and not with |- (strip). Other headers
// (indentation digits, |+, comments without a space) are not followed.
func (p *fastParser) literal(header []byte, parent int) (any, bool) {
	strip := len(header) > 1 && header[1] == '-'
	rest := header[1:]
	if strip {
		rest = header[2:]
	}
	if !endOfValue(rest) {
		return nil, false
	}
	var s []byte
	indent := 0   // the lines' indentation, once the first line with content is read
	maxBlank := 0 // the most spaces of a blank line before it
	breaks := 0   // blank lines not yet written
	started, lastBreak := false, false
	for p.pos < len(p.doc) {
		line, next := lineAt(p.doc, p.pos)
		spaces := leadingSpaces(line)
		if spaces == len(line) && (indent == 0 || spaces <= indent) {
			maxBlank = max(maxBlank, spaces) // a blank line: a line break
			breaks++
			p.pos = next
			continue
		}
		if indent == 0 {
			indent = max(maxBlank, spaces, parent+1)
			if spaces < indent {
				return nil, false // an empty scalar: not followed
			}
		}
		if spaces < indent {
			break // the first line left of the scalar ends it
		}
		if started {
			s = append(s, '\n')
		}
		for ; breaks > 0; breaks-- {
			s = append(s, '\n')
		}
		s = append(s, line[indent:]...)
		started, lastBreak = true, next > p.pos+len(line)
		p.pos = next
	}
	if !strip && lastBreak {
		s = append(s, '\n')
	}
	return string(s), true
}

// plain reads the plain scalar text opens, to a comment or the end of its
// line, and the lines that continue it: those right of col, the column of
// the collection holding it, up to a comment. As yaml_parser_scan_plain_scalar
// does, it folds each line break into a space, or into as many line breaks
// as there are blank lines.
func (p *fastParser) plain(text []byte, col int) (any, bool) {
	text, comment := cutComment(text)
	if !plainStart(text) || !plainLine(text) {
		return nil, false
	}
	var folded []byte // the scalar, if it goes on over several lines
	breaks := 0
	for pos := p.pos; !comment && pos < len(p.doc); {
		line, next := lineAt(p.doc, pos)
		spaces := leadingSpaces(line)
		if spaces == len(line) {
			breaks++
			pos = next
			continue
		}
		if spaces <= col || line[spaces] == '#' {
			break
		}
		var more []byte
		if more, comment = cutComment(line[spaces:]); !plainLine(more) {
			return nil, false
		}
		if folded == nil {
			folded = append(folded, text...)
		}
		folded = append(appendFold(folded, breaks), more...)
		breaks, pos, p.pos = 0, next, next
	}
	if folded == nil {
		return resolvePlain(text)
	}
	if bytes.IndexByte(folded, '\n') >= 0 && resolveHint(folded[0]) == numberHint {
		return nil, false // yaml.v2 cannot be given it on one line
	}
	return resolvePlain(folded)
}

// cutComment returns the text of a plain scalar less the comment after it
// and trailing spaces, and whether there was a comment.
func cutComment(text []byte) ([]byte, bool) {
	i := bytes.Index(text, []byte(" #"))
	if i >= 0 {
		text = text[:i]
	}
	return bytes.TrimRight(text, " "), i >= 0
}

// plainLine tells whether a line of a plain scalar holds no ": " and does
// not end in ':', which would make it a key: the parser's error,
// "mapping values are not allowed in this context".
func plainLine(text []byte) bool {
	return len(text) > 0 && !bytes.Contains(text, []byte(": ")) && text[len(text)-1] != ':'
}

// Hints, as resolve's table gives them for a scalar's first byte.
const (
	stringHint = iota // a string, whatever follows
	wordHint          // a string, or one of yaml11Words
	numberHint        // a number, a timestamp or a string
)

func resolveHint(c byte) int {
	switch {
	case c >= '0' && c <= '9', c == '-', c == '+', c == '.':
		return numberHint
	case strings.IndexByte("yYnNtTfFoO~", c) >= 0:
		return wordHint
	}
	return stringHint
}

// resolvePlain resolves the plain scalar text as yaml.v2's resolve does,
// then as jsonValue does: numbers are left to yaml.v2 itself, but for
// plain decimal integers.
func resolvePlain(text []byte) (any, bool) {
	switch resolveHint(text[0]) {
	case numberHint:
		if i, ok := decimal(text); ok {
			return i, true
		}
		return resolveByYAML(text)
	case wordHint:
		if v, ok := yaml11Words[string(text)]; ok {
			return v, true
		}
	}
	return string(text), true
}

// plainStart tells whether a plain scalar can start as text does: not with
// an indicator (- ? : only before a space), nor with a space or comment.
func plainStart(text []byte) bool {
	switch c := text[0]; c {
	case '-', '?', ':':
		return len(text) > 1 && text[1] != ' '
	case ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`', ' ':
		return false
	}
	return true
}

// yaml11Words are the words resolve's table gives a value other than the
// string itself, that start with a letter or ~: YAML 1.1 booleans and
// nulls, in the three spellings it knows each.
var yaml11Words = map[string]any{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true,
	"true": true, "True": true, "TRUE": true, "on": true, "On": true, "ON": true,
	"n": false, "N": false, "no": false, "No": false, "NO": false,
	"false": false, "False": false, "FALSE": false, "off": false, "Off": false, "OFF": false,
	"~": nil, "null": nil, "Null": nil, "NULL": nil,
}

// decimal reads an integer written plainly (an optional '-', no leading
// zero, at most 18 digits): resolve's ParseInt gives it, as int64 after
// jsonValue. Other numbers (signs, bases, underscores, floats) are left to
// yaml.v2.
func decimal(text []byte) (int64, bool) {
	digits := text
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 18 || (digits[0] == '0' && len(digits) > 1) {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	i, err := strconv.ParseInt(string(text), 10, 64)
	return i, err == nil
}

// resolvedScalars caches what yaml.v2 makes of the plain scalars
// resolveByYAML was given (quantities as 100m and versions as 1.2.3 recur
// in every manifest), up to maxResolved of them.
var resolvedScalars = struct {
	sync.RWMutex
	m map[string]resolvedScalar
}{m: map[string]resolvedScalar{}}

const maxResolved = 4096

type resolvedScalar struct {
	v  any
	ok bool
}

// resolveByYAML resolves the plain scalar text with yaml.v2 itself, in a
// map of its own, then as jsonValue does; false where either fails.
func resolveByYAML(text []byte) (any, bool) {
	resolvedScalars.RLock()
	r, found := resolvedScalars.m[string(text)]
	resolvedScalars.RUnlock()
	if found {
		return r.v, r.ok
	}
	var m map[string]any
	err := yaml.UnmarshalStrict(append([]byte("v: "), text...), &m)
	if v, in := m["v"]; err == nil && in && len(m) == 1 {
		v, why := jsonValue(v, 0)
		// Only a scalar is kept: the value is shared by every document
		// holding the text, and a map or list would be changed in place
		// by whoever edits one of them.
		r = resolvedScalar{v, why == "" && isScalar(v)}
	}
	resolvedScalars.Lock()
	if len(resolvedScalars.m) < maxResolved {
		resolvedScalars.m[string(text)] = r
	}
	resolvedScalars.Unlock()
	return r.v, r.ok
}

// isScalar tells a value no one can change in place.
func isScalar(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return false
	}
	return true
}
