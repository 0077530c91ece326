package load

// The quoted scalars and one-line flow sequences fastYAML follows
// (fastyaml.go).

import "bytes"

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
