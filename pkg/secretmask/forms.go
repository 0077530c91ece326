package secretmask

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// reach says where a form of a value is masked in text.
type reach int

const (
	// delimited: only where the text quotes it ("v", 'v', `v`, also with
	// escaped quotes) or gives it as a field's value (`key: v` or `key=v`
	// up to the field's end). A form that could be an ordinary word or
	// number of a message has this reach: masking the word "secret" of
	// `secrets "x" is forbidden` would tell the reader the value.
	delimited reach = iota
	// bounded: also anywhere no letter or digit continues it (a short
	// unusual form: masking it inside a longer word would garble the word
	// and give the value away).
	bounded
	// anywhere: every occurrence (a long unusual form, which ordinary text
	// does not hold by chance; a message may glue it to a word, as a CEL
	// messageExpression concatenating strings does).
	anywhere
)

// A form shorter than shortForm runes could occur in any text by chance;
// one of longForm runes or more that is not an ordinary word or number
// does not.
const (
	shortForm = 4
	longForm  = 8
)

var (
	// ordinaryWords: letters only, or words joined by one '-', '_', '.'
	// or space (read-only, kube-system, tls.crt, "is forbidden").
	ordinaryWords = regexp.MustCompile(`^\pL+(?:[-_. ]\pL+)*$`)
	// ordinaryNumber: numbers, versions, addresses, dates, times and
	// quantities (1, -2, 1.5, v1.2.3, 10.0.0.1, 2024-01-01, 12:30, 10Gi).
	ordinaryNumber = regexp.MustCompile(`^[vV]?[-+]?[0-9]+(?:[.,:/-][0-9]+)*[a-zA-Z%]{0,3}$`)
)

// reachOf classifies a form by how likely a message is to hold it for
// another reason than quoting the value. Surrounding white space does not
// count ("secret\n", as `echo secret | base64` encodes it, is a word).
func reachOf(s string) reach {
	core := strings.TrimSpace(s)
	n := utf8.RuneCountInString(core)
	switch {
	case n < shortForm || ordinaryWords.MatchString(core) || ordinaryNumber.MatchString(core):
		return delimited
	case n < longForm:
		return bounded
	}
	return anywhere
}

// formsOf returns every way the values may be written in a message: as
// they are, without surrounding white space, escaped as Go (%q, %+q) and
// JSON quote them (also twice: a JSON body quoted in a message), as Go
// prints a []byte, and base64-encoded (standard and URL alphabets, padded
// and raw); a value that is not UTF-8 also as JSON carries it (each
// stray byte U+FFFD: a webhook's message printing the bytes reaches the
// client so), and a value of several lines also line by line, for each
// line that could not be ordinary text (a PEM key's base64 lines). Forms
// that are empty or only white space are left out: there is nothing to
// mask.
func formsOf(values []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range values {
		out = appendForms(out, seen, v)
	}
	return out
}

// appendForms appends to out the forms of v (formsOf) that seen does not
// hold yet, and records them in seen.
func appendForms(out []string, seen map[string]bool, v string) []string {
	add := func(s string) {
		if strings.TrimSpace(s) == "" || seen[s] {
			return
		}
		seen[s] = true
		out = append(out, s)
	}
	written := []string{v, strings.TrimSpace(v), string([]rune(v))}
	for _, w := range written[:2] {
		once := quotedForms(w)
		written = append(written, once...)
		for _, q := range once {
			written = append(written, quotedForms(q)...)
		}
	}
	written = append(written, fmt.Sprint([]byte(v)))
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		written = append(written, enc.EncodeToString([]byte(v)))
	}
	for _, w := range written {
		add(w)
	}
	if strings.Contains(v, "\n") {
		for _, line := range strings.Split(v, "\n") {
			if line = strings.TrimSpace(line); !strings.ContainsAny(line, " \t") && reachOf(line) == anywhere {
				add(line)
			}
		}
	}
	return out
}

// quotedForms returns s escaped as the quoted strings of Go (strconv.Quote,
// QuoteToASCII) and JSON (json.Marshal, which also escapes <, > and &;
// and without that escaping) write it, without the quotes.
func quotedForms(s string) []string {
	out := []string{inner(strconv.Quote(s)), inner(strconv.QuoteToASCII(s))}
	if b, err := json.Marshal(s); err == nil {
		out = append(out, inner(string(b)))
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(s) == nil {
		out = append(out, inner(strings.TrimSuffix(b.String(), "\n")))
	}
	return out
}

func inner(quoted string) string { return quoted[1 : len(quoted)-1] }
