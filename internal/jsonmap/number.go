package jsonmap

import (
	"fmt"
	"strconv"
)

// number decodes the number at d.pos as sigs.k8s.io/json's PreserveInts
// does: int64 when the literal has no '.' and parses as an int64 ("-0" is
// 0; "1e3", which ParseInt refuses, is 1000.0), float64 otherwise; out of
// float64's range it is an error.
func (d *decoder) number() (any, error) {
	start := d.pos
	i, integer, err := d.scanNumber(start)
	if err != nil {
		return nil, err
	}
	d.pos = i
	lit := d.data[start:i]
	// Up to 18 digits fit an int64 whatever they are.
	if integer && len(lit) <= 18 {
		return smallInt(lit), nil
	}
	if integer {
		if n, err := strconv.ParseInt(string(lit), 10, 64); err == nil {
			return n, nil
		}
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil {
		if len(lit) > 40 {
			lit = append(lit[:37:37], "..."...)
		}
		return nil, &Error{Offset: start, Msg: fmt.Sprintf("number %s out of the range of a float64", lit)}
	}
	return f, nil
}

// smallInt is the value of lit, an optional '-' and up to 18 digits.
func smallInt(lit []byte) int64 {
	neg := lit[0] == '-'
	if neg {
		lit = lit[1:]
	}
	var n int64
	for _, c := range lit {
		n = n*10 + int64(c-'0')
	}
	if neg {
		return -n
	}
	return n
}

// scanNumber finds the end of the number that starts at i, following
// JSON's grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
// integer tells there was neither fraction nor exponent.
func (d *decoder) scanNumber(i int) (end int, integer bool, err error) {
	data := d.data
	if data[i] == '-' {
		i++
	}
	switch {
	case i >= len(data):
		return 0, false, d.eof()
	case data[i] == '0':
		i++
	case isDigit(data[i]):
		i = digits(data, i)
	default:
		return 0, false, d.unexpectedAt(i, "in numeric literal")
	}
	integer = true
	if i < len(data) && data[i] == '.' {
		integer = false
		if i++; i >= len(data) {
			return 0, false, d.eof()
		}
		if !isDigit(data[i]) {
			return 0, false, d.unexpectedAt(i, "after decimal point in numeric literal")
		}
		i = digits(data, i)
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		integer = false
		if i++; i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= len(data) {
			return 0, false, d.eof()
		}
		if !isDigit(data[i]) {
			return 0, false, d.unexpectedAt(i, "in exponent of numeric literal")
		}
		i = digits(data, i)
	}
	return i, integer, nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// digits returns the offset after the run of digits at i.
func digits(data []byte, i int) int {
	for i < len(data) && isDigit(data[i]) {
		i++
	}
	return i
}
