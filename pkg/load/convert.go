package load

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Why the fast path leaves a document's file to the resource builder
// (readLocal): the builder fails on the document, or its answer is not one
// readLocal can give.
const (
	fallbackUnread   = "not read (not opened, too large, interrupted), and its error reported"
	fallbackEncoding = "not plain UTF-8 (a byte order mark, or bytes that are not UTF-8)"
	fallbackJSON     = "a JSON stream the JSON decoder does not read to its end"
	fallbackSplit    = "a document separator followed by more than a comment"
	fallbackYAML     = "YAML the strict parse refuses (bad syntax, a key set twice)"
	fallbackKey      = "a map key JSON cannot hold (null, a list, a huge integer)"
	fallbackCollide  = "two keys of a map that become one string (the builder keeps either value, by map order)"
	fallbackValue    = "a value JSON cannot hold (NaN, infinity) or nesting deeper than 1000"
	fallbackObject   = "a document the builder refuses (not a map, no kind, bad metadata)"
	fallbackList     = "a List the builder refuses (bad items, an item without kind or version, a List in a List)"
	fallbackOff      = "KAPPLY_LOCALREAD=off: the builder reads every input"
)

// maxDepth bounds the nesting readLocal converts. The builder's JSON
// decoder refuses more than 10,000 levels; no manifest comes near 1000.
const maxDepth = 1000

// jsonValue returns v, a value yaml.v2 decoded into interface{}, as the
// resource builder holds it in the end: sigs.k8s.io/yaml makes v fit for
// JSON (keys to strings, convertToJSONableObject) and marshals it, and the
// unstructured decoder reads the JSON back, numbers without a '.' as int64
// when they fit and as float64 otherwise. It returns why not (a fallback
// reason) where the builder fails or has no single answer.
func jsonValue(v any, depth int) (any, string) {
	if depth > maxDepth {
		return nil, fallbackValue
	}
	switch v := v.(type) {
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			key, ok := jsonKey(k)
			if !ok {
				return nil, fallbackKey
			}
			if _, twice := m[key]; twice {
				return nil, fallbackCollide
			}
			value, why := jsonValue(e, depth+1)
			if why != "" {
				return nil, why
			}
			m[key] = value
		}
		return m, ""
	case []any:
		s := make([]any, len(v))
		for i, e := range v {
			value, why := jsonValue(e, depth+1)
			if why != "" {
				return nil, why
			}
			s[i] = value
		}
		return s, ""
	case string:
		return jsonString(v), ""
	case int:
		return int64(v), ""
	case int64:
		return v, ""
	case uint64:
		if v <= math.MaxInt64 {
			return int64(v), ""
		}
		f, err := strconv.ParseFloat(strconv.FormatUint(v, 10), 64)
		if err != nil {
			return nil, fallbackValue
		}
		return f, ""
	case float64:
		return jsonFloat(v)
	case bool, nil:
		return v, ""
	}
	return nil, fallbackValue // yaml.v2 decodes no other type into interface{}
}

// jsonFloat is f after json.Marshal and the unstructured decoder: 1e3 and
// 1.0 are written 1000 and 1 and read back as int64, -0 as int64 0, 1e21
// and 0.5 stay float64.
func jsonFloat(f float64) (any, string) {
	text, err := json.Marshal(f)
	if err != nil {
		return nil, fallbackValue // NaN, ±Inf
	}
	s := string(text)
	if !strings.Contains(s, ".") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i, ""
		}
	}
	f, err = strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, fallbackValue
	}
	return f, ""
}

// jsonKey converts a map key as sigs.k8s.io/yaml's convertToJSONableObject
// does; false for the types it refuses (null, uint64 and others).
func jsonKey(k any) (string, bool) {
	switch k := k.(type) {
	case string:
		return jsonString(k), true
	case int:
		return strconv.Itoa(k), true
	case int64:
		return strconv.FormatInt(k, 10), true
	case float64:
		s := strconv.FormatFloat(k, 'g', -1, 32)
		switch s {
		case "+Inf":
			s = ".inf"
		case "-Inf":
			s = "-.inf"
		case "NaN":
			s = ".nan"
		}
		return s, true
	case bool:
		return strconv.FormatBool(k), true
	}
	return "", false
}

// jsonString is s after json.Marshal: each byte that is not UTF-8 (the
// file is, but a !!binary scalar need not be) becomes U+FFFD.
func jsonString(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString("\uFFFD")
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
