package secretmask

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// identitySpans returns where text names one of the Secrets or one of
// their namespaces (names, after places), as the API server's errors
// (apimachinery's StatusError: `secrets "NAME" is forbidden`, `Secret
// "NAME" is invalid`, `namespaces "NS" not found`) and kapply (`secret/NAME
// -n NS`) write them: a name there is not a value, even if a value equals it.
func identitySpans(text, places string, names []string) []span {
	var out []span
	for _, name := range names {
		// Most texts name none of the Secrets: compile no pattern for them.
		// A name that is not UTF-8 is no name the server takes, and no
		// pattern can hold it.
		if name != "" && utf8.ValidString(name) && strings.Contains(text, name) {
			out = append(out, groupSpans(places, name, text)...)
		}
	}
	return out
}

// Where a message names the Secret or its namespace: what comes before
// the name (case-insensitive). After it comes a character a name cannot
// hold, or the end.
const (
	namePlaces      = `(?i:\bsecrets?\s+"|\bsecret/|\bname:\s*"|\bname=)`
	namespacePlaces = `(?i:\bnamespaces?\s+"?|\bnamespace:\s*"|\bnamespace=|(?:^|\s)-n\s+)`
)

// groupSpans returns the spans of name where places precede it in text.
func groupSpans(places, name, text string) []span {
	re := regexp.MustCompile(places + `(` + regexp.QuoteMeta(name) + `)(?:[^-.\w]|$)`)
	var out []span
	for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
		out = append(out, span{m[2], m[3]})
	}
	return out
}
