package jsonmap

import (
	"encoding/binary"
	"unicode/utf16"
	"unicode/utf8"
)

// plain holds the bytes a string holds as they are: printable ASCII but
// the quote and the backslash. Any other byte ends the string, or needs
// unescape's attention (an escape, a control byte, UTF-8 to check).
var plain = func() (t [256]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// string decodes the string at d.pos (its opening quote), boxed.
func (d *decoder) string() (any, error) {
	start := d.pos + 1
	for i := skipPlain(d.data, start); i < len(d.data); i++ {
		c := d.data[i]
		if plain[c] {
			continue
		}
		if c == '"' {
			d.pos = i + 1
			return d.box(d.data[start:i]), nil
		}
		return d.unescape(start, i)
	}
	return nil, d.eof()
}

// skipPlain skips plain bytes from i on eight at a time, and returns
// where the first eight that are not all plain start (or the last seven
// bytes or fewer). Annotations, descriptions and embedded files make
// long strings.
func skipPlain(data []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(data); i += 8 {
		w := binary.LittleEndian.Uint64(data[i:])
		// A byte below ' ', a quote, a backslash, and a byte from 0x80
		// each set a high bit; plain bytes set none.
		below := w - ' '*ones
		quote := (w ^ '"'*ones) - ones
		backslash := (w ^ '\\'*ones) - ones
		if (below|quote|backslash|w)&highs != 0 {
			break
		}
	}
	return i
}

// box returns s as a string, boxed: from the cache if it is short.
func (d *decoder) box(s []byte) any {
	if len(s) <= maxCached {
		return d.strings.get(s)
	}
	return string(s)
}

// unescape decodes the string that started at start and is plain up to i,
// as encoding/json does: escapes decoded, and each byte of invalid UTF-8
// and each \u escape of a lone surrogate replaced by U+FFFD.
func (d *decoder) unescape(start, i int) (any, error) {
	buf := append(d.buf[:0], d.data[start:i]...)
	for i < len(d.data) {
		run := i
		i = skipPlain(d.data, i)
		for i < len(d.data) && plain[d.data[i]] {
			i++
		}
		buf = append(buf, d.data[run:i]...)
		if i >= len(d.data) {
			break
		}
		switch c := d.data[i]; {
		case c == '"':
			d.buf = buf
			d.pos = i + 1
			return d.box(buf), nil
		case c == '\\':
			var err error
			if buf, i, err = d.escape(buf, i); err != nil {
				return nil, err
			}
		case c < ' ':
			return nil, d.unexpectedAt(i, "in string literal")
		default: // the first byte of a multi-byte sequence, or invalid UTF-8
			r, size := utf8.DecodeRune(d.data[i:])
			if r == utf8.RuneError && size == 1 {
				buf = utf8.AppendRune(buf, utf8.RuneError)
			} else {
				buf = append(buf, d.data[i:i+size]...)
			}
			i += size
		}
	}
	return nil, d.eof()
}

// escape appends what the escape at i (its backslash) stands for to buf
// and returns the offset after it.
func (d *decoder) escape(buf []byte, i int) ([]byte, int, error) {
	i++
	if i >= len(d.data) {
		return nil, 0, d.eof()
	}
	switch c := d.data[i]; c {
	case '"', '\\', '/':
		return append(buf, c), i + 1, nil
	case 'b':
		return append(buf, '\b'), i + 1, nil
	case 'f':
		return append(buf, '\f'), i + 1, nil
	case 'n':
		return append(buf, '\n'), i + 1, nil
	case 'r':
		return append(buf, '\r'), i + 1, nil
	case 't':
		return append(buf, '\t'), i + 1, nil
	case 'u':
		r, err := d.hex4(i + 1)
		if err != nil {
			return nil, 0, err
		}
		i += 5
		if utf16.IsSurrogate(r) {
			// A pair is decoded only when a \u escape of its other
			// half follows; the next escape, whatever it is, is left
			// for the next iteration otherwise.
			r2, ok := d.peekU(i)
			if pair := utf16.DecodeRune(r, r2); ok && pair != utf8.RuneError {
				return utf8.AppendRune(buf, pair), i + 6, nil
			}
			r = utf8.RuneError
		}
		return utf8.AppendRune(buf, r), i, nil
	default:
		return nil, 0, d.unexpectedAt(i, "in string escape code")
	}
}

// hex4 reads the four hexadecimal digits at i.
func (d *decoder) hex4(i int) (rune, error) {
	var r rune
	for j := i; j < i+4; j++ {
		if j >= len(d.data) {
			return 0, d.eof()
		}
		v := hexValue(d.data[j])
		if v < 0 {
			return 0, d.unexpectedAt(j, `in \u hexadecimal character escape`)
		}
		r = r<<4 | v
	}
	return r, nil
}

// peekU reads the \u escape at i, if there is a well-formed one.
func (d *decoder) peekU(i int) (rune, bool) {
	if i+6 > len(d.data) || d.data[i] != '\\' || d.data[i+1] != 'u' {
		return 0, false
	}
	var r rune
	for _, c := range d.data[i+2 : i+6] {
		v := hexValue(c)
		if v < 0 {
			return 0, false
		}
		r = r<<4 | v
	}
	return r, true
}

func hexValue(c byte) rune {
	switch {
	case '0' <= c && c <= '9':
		return rune(c - '0')
	case 'a' <= c && c <= 'f':
		return rune(c - 'a' + 10)
	case 'A' <= c && c <= 'F':
		return rune(c - 'A' + 10)
	}
	return -1
}
