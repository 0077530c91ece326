package shown

import (
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Text is s as kapply prints it: as it is, or Go-quoted (strconv.Quote)
// when it holds a character that does not show as itself. Quoted, a
// newline, carriage return or ESC is spelt \n, \r, \x1b and cannot
// forge or erase a line; a bidi control is spelt \u202e and cannot
// reverse what follows. The one function for every name from input.
func Text(s string) string {
	if NeedsQuotes(s) {
		return strconv.Quote(s)
	}
	return s
}

// NeedsQuotes reports whether s holds a character that does not show as
// itself: a C0 or C1 control or DEL, a line or paragraph separator
// (U+2028, U+2029), a format character such as the bidi controls
// (U+202A–202E, U+2066–2069) or a zero-width space, a space other than
// U+0020, or bytes that are not UTF-8 (a lone 0x9b is a terminal's CSI).
func NeedsQuotes(s string) bool {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size <= 1 {
				return true
			}
		}
		if r != ' ' && !unicode.IsPrint(r) {
			return true
		}
	}
	return false
}
