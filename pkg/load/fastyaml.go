package load

import (
	"bytes"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"go.yaml.in/yaml/v2"
)

// fastYAML returns, for a document of the common block shape, the value
// jsonValue makes of what yaml.UnmarshalStrict decodes from it: the map of
// a block mapping, or nil (with ok) for a document of nothing but comments
// and a "---". ok is false for everything else, and then yamlObject runs
// yaml.v2 itself.
//
// It is written by hand because yaml.v2's parser, reflection and
// allocation were a quarter of the CPU time of a 10,000-file load, and no
// library decodes YAML into these values without them. Like
// plainUniqueKeys it is a filter, never a judge: it follows a subset of
// YAML exactly, as yaml.v2's scanner (scannerc.go) and resolve
// (resolve.go) read it — block maps of plain keys (splitKey's rule), block
// sequences, plain and quoted scalars (over several lines too), flow
// sequences of words and quoted scalars on one line, {}, and literal block
// scalars (| and |-) — and answers ok=false on anything else: anchors,
// aliases, tags, other flow collections, folded scalars, the rarer escapes
// of double quotes, a key set twice, tabs, control characters, nesting
// deeper than maxFastDepth. Plain scalars that may be numbers (a digit,
// sign or '.' first) are resolved by yaml.v2 itself, but for plain decimal
// integers.
func fastYAML(doc []byte) (m map[string]any, ok bool) {
	if !printable(doc) {
		return nil, false
	}
	p := fastParser{doc: doc}
	p.next()
	if !p.eof && p.col == 0 && isDocumentStart(p.line) {
		p.next()
	}
	if p.eof {
		return nil, true
	}
	m, ok = p.blockMap(p.col, 0) // a list or a scalar is not a map: not followed
	return m, ok && p.eof
}

// maxFastDepth bounds the nesting fastYAML follows, below jsonValue's
// maxDepth (the schemas of CRDs reach 120).
const maxFastDepth = maxDepth / 2

// maxKeyLength bounds a key's length: yaml.v2 looks for the ':' of an
// implicit key in the next 1024 characters only.
const maxKeyLength = 512

// fastParser reads a document line by line. The current line is the next
// one that is neither blank nor a comment: its text from its first
// non-space byte, and its column.
type fastParser struct {
	doc  []byte
	pos  int // where the line after the current one starts
	line []byte
	col  int
	eof  bool // no current line: the document is read
}

// next makes the next line with content the current one.
func (p *fastParser) next() {
	for p.pos < len(p.doc) {
		line := p.doc[p.pos:]
		if end := bytes.IndexByte(line, '\n'); end >= 0 {
			line = line[:end]
			p.pos += end + 1
		} else {
			p.pos = len(p.doc)
		}
		if col := leadingSpaces(line); col < len(line) && line[col] != '#' {
			p.line, p.col = line[col:], col
			return
		}
	}
	p.line, p.eof = nil, true
}

// blockMap reads the block map whose keys are at column col, from the
// current line (a key of it) to the first line left of col.
func (p *fastParser) blockMap(col, depth int) (map[string]any, bool) {
	if depth > maxFastDepth {
		return nil, false
	}
	m := map[string]any{}
	for !p.eof && p.col == col {
		key, text, ok := splitKey(p.line)
		if !ok || len(key) > maxKeyLength {
			return nil, false
		}
		if _, twice := m[key]; twice {
			return nil, false // the strict parse's error
		}
		v, ok := p.value(text, col, depth+1)
		if !ok {
			return nil, false
		}
		m[key] = v
	}
	return m, true
}

// sequence reads the block sequence whose "- " are at column col.
func (p *fastParser) sequence(col, depth int) ([]any, bool) {
	if depth > maxFastDepth {
		return nil, false
	}
	s := []any{}
	for !p.eof && p.col == col && isEntry(p.line) {
		item := 1 + leadingSpaces(p.line[1:])
		text := p.line[item:]
		if len(text) == 0 || text[0] == '#' {
			return nil, false // the item on the next lines, or null: not followed
		}
		var v any
		var ok bool
		if keyLength(text) > 0 || isEntry(text) {
			// "- key: value" opens a map, "- - x" a list, at the
			// item's column: the rest of the line is read as a line.
			p.line, p.col = text, col+item
			v, ok = p.node(depth + 1)
			ok = ok && (p.eof || p.col <= col)
		} else {
			v, ok = p.value(text, col, depth+1)
		}
		if !ok {
			return nil, false
		}
		s = append(s, v)
	}
	return s, true
}

// node reads the map or list that starts on the current line.
func (p *fastParser) node(depth int) (any, bool) {
	if isEntry(p.line) {
		return p.sequence(p.col, depth)
	}
	return p.blockMap(p.col, depth)
}

// value reads the value whose text is what follows "key:" or "- " on the
// current line, in the collection at column col; the line after it is then
// the current one, and must not be right of col. (sequence gives no empty
// text: only a map's value may be on the next lines.) Scalars over several
// lines move p.pos past their last line.
func (p *fastParser) value(text []byte, col, depth int) (any, bool) {
	if len(text) == 0 || text[0] == '#' {
		// Nothing on the line: a map or list on the next lines, or null.
		p.next()
		switch {
		case !p.eof && p.col > col:
			v, ok := p.node(depth)
			return v, ok && (p.eof || p.col <= col)
		case !p.eof && p.col == col && isEntry(p.line):
			return p.sequence(col, depth) // "key:" then "- item" at the key's column
		}
		return nil, true
	}
	var v any
	var ok bool
	switch text[0] {
	case '|':
		v, ok = p.literal(text, col)
	case '\'', '"':
		v, ok = p.quoted(text, col)
	case '[':
		v, ok = flowSequence(text)
	case '{':
		v, ok = map[string]any{}, len(text) > 1 && text[1] == '}' && endOfValue(text[2:])
	default:
		v, ok = p.plain(text, col)
	}
	p.next()
	// A deeper line would continue the scalar, or be an error.
	return v, ok && (p.eof || p.col <= col)
}

// quoted reads the quoted scalar text opens, to its closing quote on this
// line or one of the next ones (each right of col, the column of the
// collection holding it), folding line breaks as plain does; spaces before
// a line break are dropped, and those after it.
func (p *fastParser) quoted(text []byte, col int) (any, bool) {
	q, line := text[0], text[1:]
	end, escaped := closingQuote(line, q)
	if end >= 0 && !escaped {
		return string(line[:end]), endOfValue(line[end+1:]) // the common case
	}
	var s []byte
	for pos := p.pos; ; {
		if end == -2 {
			return nil, false // an escape not followed
		}
		if end >= 0 {
			s = appendUnquoted(s, line[:end], q)
			p.pos = pos
			return string(s), endOfValue(line[end+1:])
		}
		s = bytes.TrimRight(appendUnquoted(s, line, q), " ")
		breaks := 0
		for {
			if pos >= len(p.doc) {
				return nil, false // not closed: the parser's error
			}
			line, pos = lineAt(p.doc, pos)
			if spaces := leadingSpaces(line); spaces < len(line) {
				if spaces <= col {
					return nil, false
				}
				line = line[spaces:]
				break
			}
			breaks++
		}
		s = appendFold(s, breaks)
		end, _ = closingQuote(line, q)
	}
}

// closingQuote returns the index of line's closing quote q (-1: none, -2:
// an escape not followed), and whether escapes come before it: a doubled
// quote in single quotes, a backslash in double quotes.
func closingQuote(line []byte, q byte) (end int, escaped bool) {
	for i := 0; i < len(line); i++ {
		switch {
		case q == '"' && line[i] == '\\':
			if i+1 == len(line) || doubleQuoteEscape(line[i+1]) == "" {
				return -2, false
			}
			escaped = true
			i++
		case line[i] != q:
		case q == '\'' && i+1 < len(line) && line[i+1] == '\'':
			escaped = true
			i++
		default:
			return i, escaped
		}
	}
	return -1, escaped
}

// appendUnquoted appends text, inside quotes q, unescaped.
func appendUnquoted(s, text []byte, q byte) []byte {
	for i := 0; i < len(text); i++ {
		switch {
		case q == '"' && text[i] == '\\':
			s = append(s, doubleQuoteEscape(text[i+1])...)
			i++
		case q == '\'' && text[i] == '\'':
			s = append(s, '\'')
			i++
		default:
			s = append(s, text[i])
		}
	}
	return s
}

// doubleQuoteEscape is what yaml_parser_scan_flow_scalar makes of \c in
// double quotes, for the escapes followed: not \x, \u and \U, nor an
// escaped space, which would be dropped with the spaces ending a line, nor
// an escaped line break ("": not followed; \/ is yaml.v2's error).
func doubleQuoteEscape(c byte) string {
	switch c {
	case '0':
		return "\x00"
	case 'a':
		return "\a"
	case 'b':
		return "\b"
	case 't':
		return "\t"
	case 'n':
		return "\n"
	case 'v':
		return "\v"
	case 'f':
		return "\f"
	case 'r':
		return "\r"
	case 'e':
		return "\x1b"
	case '"', '\'', '\\':
		return string(c)
	case 'N':
		return "\u0085"
	case '_':
		return "\u00a0"
	case 'L':
		return "\u2028"
	case 'P':
		return "\u2029"
	}
	return ""
}

// appendFold appends what a line break and the blank lines after it fold
// into, inside a scalar: a space, or a line break for each blank line.
func appendFold(s []byte, blankLines int) []byte {
	if blankLines == 0 {
		return append(s, ' ')
	}
	for range blankLines {
		s = append(s, '\n')
	}
	return s
}

// flowSequence reads a flow sequence closed on its line whose items are
// words (splitKey's bytes, a letter, digit or _ first) or quoted scalars:
// [], [name], [1, 2], ["-g", 'daemon off;']. Other flow collections, and
// empty items, are not followed.
func flowSequence(text []byte) (any, bool) {
	s := []any{}
	rest := bytes.TrimLeft(text[1:], " ")
	if len(rest) > 0 && rest[0] == ']' {
		return s, endOfValue(rest[1:])
	}
	for len(rest) > 0 {
		var v any
		if q := rest[0]; q == '\'' || q == '"' {
			end, escaped := closingQuote(rest[1:], q)
			switch {
			case end < 0:
				return nil, false
			case escaped:
				v = string(appendUnquoted(nil, rest[1:1+end], q))
			default:
				v = string(rest[1 : 1+end])
			}
			rest = rest[end+2:]
		} else {
			n := 0
			for n < len(rest) && isKeyByte(rest[n], false) && (n > 0 || rest[0] != '.' && rest[0] != '/' && rest[0] != '-') {
				n++
			}
			if n == 0 {
				return nil, false
			}
			var ok bool
			if v, ok = resolvePlain(rest[:n]); !ok {
				return nil, false
			}
			rest = rest[n:]
		}
		s = append(s, v)
		rest = bytes.TrimLeft(rest, " ")
		switch {
		case len(rest) > 0 && rest[0] == ']':
			return s, endOfValue(rest[1:])
		case len(rest) > 0 && rest[0] == ',':
			rest = bytes.TrimLeft(rest[1:], " ")
		default:
			return nil, false
		}
	}
	return nil, false
}

// endOfValue tells whether rest, what follows a value on its line, is
// blank or a comment.
func endOfValue(rest []byte) bool {
	trimmed := bytes.TrimLeft(rest, " ")
	return len(trimmed) == 0 || (trimmed[0] == '#' && len(trimmed) < len(rest))
}

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

// lineAt returns the line that starts at pos, and where the next one starts.
func lineAt(doc []byte, pos int) (line []byte, next int) {
	line = doc[pos:]
	if end := bytes.IndexByte(line, '\n'); end >= 0 {
		return line[:end], pos + end + 1
	}
	return line, len(doc)
}

func leadingSpaces(line []byte) int {
	n := 0
	for n < len(line) && line[n] == ' ' {
		n++
	}
	return n
}

// isEntry tells whether line is a sequence entry: "-" then a space or
// nothing.
func isEntry(line []byte) bool {
	return len(line) > 0 && line[0] == '-' && (len(line) == 1 || line[1] == ' ')
}

// isDocumentStart tells whether line is "---", with at most a comment.
func isDocumentStart(line []byte) bool {
	return bytes.HasPrefix(line, []byte("---")) && endOfValue(line[3:])
}

// printable tells whether doc holds only what yaml.v2 reads as printable
// characters of a line, and '\n': no tab, '\r', other control character,
// byte order mark, NEL or Unicode line separator (which YAML reads as
// breaks), nor bytes that are not UTF-8.
func printable(doc []byte) bool {
	for i := 0; i < len(doc); {
		c := doc[i]
		if c < utf8.RuneSelf {
			if (c < ' ' && c != '\n') || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(doc[i:])
		switch {
		case r == utf8.RuneError && size == 1, r < 0xa0, r == 0x2028, r == 0x2029, r == 0xfeff, r == 0xfffe, r == 0xffff:
			return false
		}
		i += size
	}
	return true
}
