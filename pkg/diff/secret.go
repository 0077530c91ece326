package diff

import (
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// foldStringData returns a Secret as the server stores it: every stringData
// entry written, base64-encoded, over data, and stringData gone. A client
// dry run's merged object still has the file's stringData; folding it
// compares like with like. obj is not modified.
func foldStringData(obj map[string]any) map[string]any {
	plain, ok := obj["stringData"].(map[string]any)
	if !ok {
		return obj
	}
	data := map[string]any{}
	if existing, ok := obj["data"].(map[string]any); ok {
		data = copyMap(existing)
	}
	for k, v := range plain {
		data[k] = base64.StdEncoding.EncodeToString([]byte(fmt.Sprint(v)))
	}
	out := copyMap(obj)
	delete(out, "stringData")
	out["data"] = data
	return out
}

// MaskSecret returns obj with a v1 Secret's values masked as "***": data,
// stringData, and the last-applied annotations, which may copy them. For
// commands that print whole objects (apply -o yaml|json, export); other
// objects are returned as they are. obj is not modified.
func MaskSecret(obj map[string]any) map[string]any {
	if !isSecret(obj) {
		return obj
	}
	masked, _ := maskSecret(obj, nil)
	return masked
}

// shortValue is the length under which a value is masked in text only
// where it stands alone, not inside a word: masking every "ab" would
// garble a message, and such a value is guessed anyway.
const shortValue = 4

// MaskSecretText returns text with every value of the given v1 Secrets
// masked as "***": data values as stored (base64) and decoded, stringData
// values as given and base64-encoded, each also as Go or JSON quotes escape
// it. An error or warning about a Secret may quote a value (a message of
// the server or of an admission webhook). objs that are not Secrets, and
// nil ones, are skipped.
func MaskSecretText(text string, objs ...map[string]any) string {
	values := secretTexts(objs)
	// Longest first: a value holding a shorter one is masked whole.
	slices.SortFunc(values, func(a, b string) int { return len(b) - len(a) })
	for _, v := range values {
		text = maskText(text, v)
	}
	return text
}

// secretTexts lists every form of every value of the Secrets in objs.
func secretTexts(objs []map[string]any) []string {
	seen := map[string]bool{}
	add := func(s string) {
		if s == "" {
			return
		}
		seen[s] = true
		quoted := strconv.Quote(s)
		seen[quoted[1:len(quoted)-1]] = true
	}
	for _, obj := range objs {
		if !isSecret(obj) {
			continue
		}
		for _, field := range secretFields {
			values, _ := obj[field].(map[string]any)
			for _, v := range values {
				if v == nil {
					continue
				}
				s := fmt.Sprint(v)
				add(s)
				add(base64.StdEncoding.EncodeToString([]byte(s)))
				if decoded, err := base64.StdEncoding.DecodeString(s); err == nil && field == "data" {
					add(string(decoded))
				}
			}
		}
	}
	return slices.Collect(maps.Keys(seen))
}

// maskText masks value in text: everywhere, or for a short value only
// where no letter or digit touches it.
func maskText(text, value string) string {
	if len(value) >= shortValue {
		return strings.ReplaceAll(text, value, maskSame)
	}
	var b strings.Builder
	from := 0
	for {
		i := strings.Index(text[from:], value)
		if i < 0 {
			b.WriteString(text[from:])
			return b.String()
		}
		start, end := from+i, from+i+len(value)
		b.WriteString(text[from:start])
		if (start == 0 || !isWordByte(text[start-1])) && (end == len(text) || !isWordByte(text[end])) {
			b.WriteString(maskSame)
		} else {
			b.WriteString(value)
		}
		from = end
	}
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// IsSecret reports whether obj is a v1 Secret, whose data and stringData
// values are masked.
func IsSecret(obj map[string]any) bool { return isSecret(obj) }
