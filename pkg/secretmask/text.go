package secretmask

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// Text returns text with every value of the given v1 Secrets masked as
// "***": data values as stored (base64) and decoded, stringData values,
// each in every form a message may write it (see formsOf). objs that are
// not Secrets, and nil ones, are skipped.
//
// A value is found where it can be told from the rest of the message, not
// as any substring: where the text quotes it or gives it as a field's
// value; and, unless it could be an ordinary word or number, also where it
// stands in running text (see reach). So a value "secret" is masked in
// `the value "secret" is not allowed` and left in the word "secret" of the
// same message: masking the word would tell the reader the value. Where a
// message names the Secret itself (`secrets "NAME"`, `secret/NAME`,
// `-n NAMESPACE`), the name and namespace are left, even when a value
// equals them, for the same reason.
//
// No library finds values in free text this way; apimachinery's and
// client-go's redaction works on objects and headers, not on messages.
func Text(text string, objs ...map[string]any) string {
	if text == "" {
		return text
	}
	var m Masker
	m.Add(objs...)
	return m.Text(text)
}

// secretValues lists the values of the Secrets among objs: data values
// decoded (and as stored when they do not decode), stringData values as
// given; and the Secrets' names and namespaces. Each list is sorted, each
// item once: many Secrets share values, and most share a namespace.
func secretValues(objs []map[string]any) (values, names, namespaces []string) {
	for _, obj := range objs {
		if !IsSecret(obj) {
			continue
		}
		meta, _ := obj["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		namespace, _ := meta["namespace"].(string)
		names, namespaces = append(names, name), append(namespaces, namespace)
		for _, field := range Fields() {
			entries, _ := obj[field].(map[string]any)
			for _, v := range entries {
				s, isString := v.(string)
				if !isString {
					values = appendLeaves(values, v)
					continue
				}
				decoded, err := base64.StdEncoding.DecodeString(s)
				if field != "data" || err != nil {
					values = append(values, s)
					values = appendJSONLeaves(values, s)
					continue
				}
				values = append(values, string(decoded))
				values = appendJSONLeaves(values, string(decoded))
				// Its base64 forms hold s as stored, unless s is not
				// canonical (the decoder ignores stray padding bits).
				if base64.StdEncoding.EncodeToString(decoded) != s {
					values = append(values, s)
				}
			}
		}
	}
	return sortedSet(values), sortedSet(names), sortedSet(namespaces)
}

// appendLeaves appends what a value that is not a string holds: a number
// or boolean as Go prints it, each leaf of a map or list (the server
// refuses such a value, and its server-side apply error quotes it whole:
// `got &value.valueUnstructured{Value:map[...]{"password":"..."}}`).
func appendLeaves(values []string, v any) []string {
	switch v := v.(type) {
	case nil:
	case string:
		values = append(values, v)
	case map[string]any:
		for _, item := range v {
			values = appendLeaves(values, item)
		}
	case []any:
		for _, item := range v {
			values = appendLeaves(values, item)
		}
	default:
		values = append(values, fmt.Sprint(v))
	}
	return values
}

// appendJSONLeaves appends the strings a value that is a JSON object holds
// (a .dockerconfigjson's auth and password), what each that is base64
// decodes to (the auth's user:password), and the password of such a pair:
// a message may quote one without the rest.
func appendJSONLeaves(values []string, s string) []string {
	var obj map[string]any
	if !strings.HasPrefix(strings.TrimSpace(s), "{") || json.Unmarshal([]byte(s), &obj) != nil {
		return values
	}
	for _, leaf := range appendLeaves(nil, obj) {
		values = append(values, leaf)
		if decoded, err := base64.StdEncoding.DecodeString(leaf); err == nil && len(decoded) >= shortForm && utf8.Valid(decoded) {
			_, password, _ := strings.Cut(string(decoded), ":")
			values = append(values, string(decoded), password)
		}
	}
	return values
}

func sortedSet(items []string) []string {
	slices.Sort(items)
	return slices.Compact(items)
}

// span is a range [start, end) of bytes of the text.
type span struct{ start, end int }

func overlapsAny(s span, others []span) bool {
	return slices.ContainsFunc(others, func(o span) bool { return s.start < o.end && o.start < s.end })
}

// occurrences returns where the form f of a value stands in text as a
// value, for f's reach.
func occurrences(text, f string) []span {
	first, tail := strings.Index(text, f), truncatedTail(text, f)
	if first < 0 && tail == nil {
		return nil // most forms: no need to classify them
	}
	r := reachOf(f)
	var out []span
	for from := first; from >= 0; {
		s := span{from, from + len(f)}
		if standsAsValue(text, s, r) {
			out = append(out, s)
		}
		i := strings.Index(text[s.start+1:], f)
		if i < 0 {
			break
		}
		from = s.start + 1 + i
	}
	if r == anywhere {
		out = append(out, tail...)
	}
	return out
}

// standsAsValue reports whether the occurrence s of a form of reach r is
// one to mask.
func standsAsValue(text string, s span, r reach) bool {
	switch {
	case r == anywhere, quoted(text, s), fieldValue(text, s):
		return true
	case r == bounded:
		return !continuesWord(text, s)
	}
	return false
}

// quoted reports an occurrence between a pair of the same quotes: " ' or
// `, each preceded by as many backslashes (\"v\" in a quoted JSON body);
// but not a JSON object's key ("data":), which names a field.
func quoted(text string, s span) bool {
	if s.start == 0 || s.end == len(text) {
		return false
	}
	q := text[s.start-1]
	if q != '"' && q != '\'' && q != '`' {
		return false
	}
	escapes := len(text[:s.start-1]) - len(strings.TrimRight(text[:s.start-1], `\`))
	closing := strings.Repeat(`\`, escapes) + string(q)
	after, ok := strings.CutPrefix(text[s.end:], closing)
	return ok && !(strings.HasPrefix(after, ":") && !strings.HasPrefix(after, ": "))
}

// fieldEnds are the bytes that end a field's value.
const fieldEnds = "\n\r\t,;)]}\"'"

// fieldValue reports an occurrence given as a field's value: after ": "
// up to the end of the line or of the text, or one of fieldEnds; after
// "=", or after a Go struct field's "{Name:" or " Name:" (%+v, %#v: the
// server-side apply error's `valueUnstructured{Value:73519}`), also up to
// a space. A word after ": " followed by more words is running text
// ("forbidden: secret values ...").
func fieldValue(text string, s span) bool {
	before, after := text[:s.start], text[s.end:]
	colon := strings.HasSuffix(before, ": ")
	equals := strings.HasSuffix(before, "=") || strings.HasSuffix(before, "= ") || goStructField(before)
	if !colon && !equals {
		return false
	}
	return after == "" || strings.IndexByte(fieldEnds, after[0]) >= 0 || equals && after[0] == ' '
}

// goStructField reports text ending in a field name as Go's %+v and %#v
// print a struct: "{Name:" or " Name:".
func goStructField(text string) bool {
	if !strings.HasSuffix(text, ":") {
		return false
	}
	return goFieldName.MatchString(text[max(0, len(text)-64):])
}

var goFieldName = regexp.MustCompile(`[{ ][A-Z][A-Za-z0-9_]*:$`)

// continuesWord reports whether a letter or digit continues s's first or
// last character, itself a letter or digit, beyond s.
func continuesWord(text string, s span) bool {
	return s.start > 0 && isWordByte(text[s.start]) && isWordByte(text[s.start-1]) ||
		s.end < len(text) && isWordByte(text[s.end-1]) && isWordByte(text[s.end])
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// minTail is the shortest start of a long value masked at the end of a
// text: the API server cuts each warning to 256 characters once a
// response's warnings pass 4096, which may leave a value's start.
const minTail = shortForm

// truncatedTail returns the end of text when it is the start of value
// (not the whole), at least minTail bytes long, not continuing a word and
// not itself an ordinary word or number (a text may end in "secret"
// without having cut the value "secretive-7x9k").
func truncatedTail(text, value string) []span {
	for start := len(text) - min(len(value)-1, len(text)); start <= len(text)-minTail; start++ {
		s := span{start, len(text)}
		if text[start] == value[0] && strings.HasPrefix(value, text[start:]) && !continuesWord(text, s) && reachOf(text[start:]) != delimited {
			return []span{s}
		}
	}
	return nil
}

// replaceSpans writes text with each run of overlapping or touching spans
// replaced by one mask.
func replaceSpans(text string, spans []span) string {
	if len(spans) == 0 {
		return text
	}
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	var b strings.Builder
	at := 0
	for i := 0; i < len(spans); {
		start, end := spans[i].start, spans[i].end
		for i++; i < len(spans) && spans[i].start <= end; i++ {
			end = max(end, spans[i].end)
		}
		b.WriteString(text[at:start])
		b.WriteString(Mask)
		at = end
	}
	b.WriteString(text[at:])
	return b.String()
}
