package diff

import (
	"unicode/utf8"

	goyaml "go.yaml.in/yaml/v2"
	"sigs.k8s.io/yaml"

	"github.com/kapply/kapply/internal/offswitch"
)

var yamlEmitOn = !offswitch.Off("KAPPLY_YAMLEMIT")

// toYAML renders an object as sigs.k8s.io/yaml.Marshal does, byte for byte.
// That function encodes JSON, parses the JSON back with yaml.v2 and encodes
// the result: half of a large diff's time and allocations went there. Where
// the round trip cannot change a value, the object is encoded directly:
// by emitYAML, which writes yaml.v2's bytes without its machinery, or by
// yaml.v2 itself where emitYAML is not sure; elsewhere the round trip runs
// as before (see direct).
func toYAML(obj map[string]any) (string, error) {
	if obj == nil {
		return "", nil
	}
	if !direct(obj) {
		out, err := yaml.Marshal(obj)
		return string(out), err
	}
	if !yamlEmitOn {
		out, err := yaml.Marshal(obj)
		return string(out), err
	}
	if out, ok := emitYAML(obj); ok {
		return out, nil
	}
	out, err := goyaml.Marshal(obj)
	return string(out), err
}

// direct tells whether yaml.v2 encodes v as it encodes v's round trip
// through JSON. It does for plain strings (see plainString), booleans,
// integers and nulls, and for maps and lists of those
// (yaml.v2 sorts map keys the same way either way). It does not for floats
// (JSON writes 1e6 as 1000000, which comes back an integer), json.Number
// and other types, nor for nil maps and lists held in a typed value (JSON
// writes null, yaml.v2 {} or []).
func direct(v any) bool {
	switch x := v.(type) {
	case nil, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return true
	case string:
		return plainString(x)
	case map[string]any:
		if x == nil {
			return false
		}
		for k, item := range x {
			if !plainString(k) || !direct(item) {
				return false
			}
		}
		return true
	case []any:
		if x == nil {
			return false
		}
		for _, item := range x {
			if !direct(item) {
				return false
			}
		}
		return true
	}
	return false
}

// plainString tells whether s survives the JSON round trip unchanged and
// without error: valid UTF-8 (JSON replaces invalid bytes), and no
// character that JSON escapes (controls) or that yaml.v2 refuses to read
// raw (DEL, C1 controls, BOM, non-characters) — those take the round trip.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f {
			return plainRunes(s[i:])
		}
	}
	return true
}

func plainRunes(s string) bool {
	for _, r := range s {
		switch {
		case r == utf8.RuneError, r < 0x20 && r != '\t' && r != '\n' && r != '\r',
			r >= 0x7f && r < 0xa0, r == 0xfeff, r == 0xfffe, r == 0xffff:
			return false
		}
	}
	return true
}
