package jsonmap

import (
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Append appends the JSON encoding of v to dst, byte for byte what
// encoding/json's Marshal writes (keys sorted, <, > and & escaped), for
// the values unstructured objects hold: map[string]any, []any, string,
// int64, float64, bool and nil. ok is false, and dst is to be discarded,
// when v holds any other type, or a float json cannot encode (NaN, ±Inf):
// the caller encodes v with encoding/json, which knows every type and
// gives the error.
//
// It exists for speed: every object of every apply is encoded as its
// last-applied record (kubectl's bytes, to compare with the live one),
// and encoding/json reaches each value through reflection and sorts each
// map's keys through reflect.Value wrappers.
func Append(dst []byte, v any) (out []byte, ok bool) {
	if !on {
		return dst, false
	}
	e := encoder{out: dst}
	if !e.value(v) {
		return dst, false
	}
	return e.out, true
}

type encoder struct {
	out  []byte
	keys []string // scratch for sorting, reused by maps not nested in each other
}

func (e *encoder) value(v any) bool {
	switch v := v.(type) {
	case nil:
		e.out = append(e.out, "null"...)
	case string:
		e.string(v)
	case bool:
		e.out = strconv.AppendBool(e.out, v)
	case int64:
		e.out = strconv.AppendInt(e.out, v, 10)
	case float64:
		return e.float(v)
	case map[string]any:
		return e.object(v)
	case []any:
		return e.array(v)
	default:
		return false
	}
	return true
}

func (e *encoder) object(m map[string]any) bool {
	if m == nil {
		e.out = append(e.out, "null"...)
		return true
	}
	// The scratch slice is taken for the duration of this map: maps
	// nested in it take a new one (rare beyond a few levels).
	keys := e.keys[:0]
	e.keys = nil
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	e.out = append(e.out, '{')
	for i, k := range keys {
		if i > 0 {
			e.out = append(e.out, ',')
		}
		e.string(k)
		e.out = append(e.out, ':')
		if !e.value(m[k]) {
			return false
		}
	}
	e.out = append(e.out, '}')
	clear(keys)
	e.keys = keys[:0]
	return true
}

func (e *encoder) array(a []any) bool {
	if a == nil {
		e.out = append(e.out, "null"...)
		return true
	}
	e.out = append(e.out, '[')
	for i, v := range a {
		if i > 0 {
			e.out = append(e.out, ',')
		}
		if !e.value(v) {
			return false
		}
	}
	e.out = append(e.out, ']')
	return true
}

// float writes f as encoding/json's floatEncoder does for 64 bits: the
// shortest representation, in exponent form below 1e-6 and from 1e21, with
// a one-digit negative exponent written without its leading zero.
func (e *encoder) float(f float64) bool {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return false
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	e.out = strconv.AppendFloat(e.out, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(e.out)
		if n >= 4 && e.out[n-4] == 'e' && e.out[n-3] == '-' && e.out[n-2] == '0' {
			e.out[n-2] = e.out[n-1]
			e.out = e.out[:n-1]
		}
	}
	return true
}

const hex = "0123456789abcdef"

// string writes s quoted as encoding/json does with HTML escaping on:
// ", \ and control characters escaped (\b, \f, \n, \r, \t by name), <, >
// and & as \u003c, \u003e and \u0026, U+2028 and U+2029 escaped, and each
// byte of invalid UTF-8 as U+FFFD.
func (e *encoder) string(s string) {
	e.out = append(e.out, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			e.out = append(e.out, s[start:i]...)
			switch b {
			case '\\', '"':
				e.out = append(e.out, '\\', b)
			case '\b':
				e.out = append(e.out, '\\', 'b')
			case '\f':
				e.out = append(e.out, '\\', 'f')
			case '\n':
				e.out = append(e.out, '\\', 'n')
			case '\r':
				e.out = append(e.out, '\\', 'r')
			case '\t':
				e.out = append(e.out, '\\', 't')
			default:
				e.out = append(e.out, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			e.out = append(e.out, s[start:i]...)
			e.out = append(e.out, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			e.out = append(e.out, s[start:i]...)
			e.out = append(e.out, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	e.out = append(e.out, s[start:]...)
	e.out = append(e.out, '"')
}
