package load

import (
	"bytes"
	"unicode/utf8"
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
