package diff

// How yaml.v2 writes one string: the quote style it chooses, and the
// writers of each style, for emitYAML (yamlemit.go).

import (
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	goyaml "go.yaml.in/yaml/v2"
)

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
			e.space(s, i, indent, !spaces)
			spaces = true
			continue
		}
		e.char(c)
		spaces = false
	}
}

// space writes the space s[i], or breaks the line there when breakable
// (the caller's rule: first of a run of spaces, inside the scalar), the
// line is past the width and the next character is no space, as libyaml's
// emitter does for plain and single-quoted scalars.
func (e *yamlEmitter) space(s string, i, indent int, breakable bool) {
	if breakable && e.col > bestWidth && s[i+1] != ' ' {
		e.wrap(indent)
		return
	}
	e.buf = append(e.buf, ' ')
	e.col++
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
			e.space(s, i, indent, breaks && !spaces && i > 0 && i < len(s)-1)
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
