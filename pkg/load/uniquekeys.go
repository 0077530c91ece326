package load

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"

	yamlv2 "go.yaml.in/yaml/v2"
)

// plainUniqueKeys tells, cheaply, that doc is block YAML of the common
// shape in which no map sets a key twice, so that the strict parse of
// lossError (as costly as the load itself: half of the load of 10,000 files)
// can be skipped. It is a filter, never a judge: true only when it has
// followed every line; anything it does not fully understand — quoted,
// flow or complex keys, anchors, aliases, tags, merge keys, YAML 1.1
// booleans and numbers as keys (yes: and true: are one key), plain scalars
// over several lines, tabs — makes it answer false, and the strict parse
// decides.
func plainUniqueKeys(doc []byte) bool {
	// maps are the open block maps, innermost last: their column and keys.
	type blockMap struct {
		col  int
		keys map[string]bool
	}
	var maps []blockMap
	// scalarCol is the column of the map whose key holds a block scalar
	// (| or >) being read; its lines are deeper than that column.
	scalarCol := -1
	for n, line := range bytes.Split(doc, []byte("\n")) {
		col := 0
		for col < len(line) && line[col] == ' ' {
			col++
		}
		rest := line[col:]
		if scalarCol >= 0 {
			if len(bytes.TrimSpace(rest)) == 0 || col > scalarCol {
				continue
			}
			scalarCol = -1
		}
		switch {
		case len(rest) == 0, rest[0] == '#':
			continue
		case n == 0 && string(bytes.TrimRight(rest, " ")) == "---":
			continue
		case bytes.ContainsAny(line, "\t\r"):
			return false
		}
		// A list item: "- key: value" opens a map of its own; "- scalar"
		// holds none.
		if rest[0] == '-' {
			if len(rest) == 1 || rest[1] != ' ' {
				return false // "-" alone (a nested block) or "-x" (a plain scalar): not followed
			}
			for len(maps) > 0 && maps[len(maps)-1].col > col {
				maps = maps[:len(maps)-1]
			}
			item := 1
			for item < len(rest) && rest[item] == ' ' {
				item++
			}
			col, rest = col+item, rest[item:]
			if len(rest) == 0 || (rest[0] == '-' && (len(rest) == 1 || rest[1] == ' ')) {
				return false // a nested list
			}
			key, value, isKey := splitKey(rest)
			if !isKey {
				if !plainValue(value) {
					return false
				}
				continue
			}
			maps = append(maps, blockMap{col: col, keys: map[string]bool{key: true}})
			switch kind := valueKind(value); {
			case kind == badValue:
				return false
			case kind == blockScalar:
				scalarCol = col
			}
			continue
		}
		key, value, isKey := splitKey(rest)
		if !isKey {
			return false
		}
		for len(maps) > 0 && maps[len(maps)-1].col > col {
			maps = maps[:len(maps)-1]
		}
		if len(maps) == 0 || maps[len(maps)-1].col < col {
			maps = append(maps, blockMap{col: col, keys: map[string]bool{}})
		}
		if keys := maps[len(maps)-1].keys; keys[key] {
			return false
		} else {
			keys[key] = true
		}
		switch kind := valueKind(value); {
		case kind == badValue:
			return false
		case kind == blockScalar:
			scalarCol = col
		}
	}
	return true
}

// splitKey splits "key: value" or "key:" where key is a plain name that
// YAML 1.1 reads as a string, and only as itself.
func splitKey(s []byte) (key string, value []byte, ok bool) {
	i := keyLength(s)
	if i == 0 {
		return "", s, false
	}
	return string(s[:i]), bytes.TrimLeft(s[i+1:], " "), true
}

// keyLength is the length of the key splitKey finds in s, 0 if none.
func keyLength(s []byte) int {
	i := 0
	for i < len(s) && isKeyByte(s[i], i == 0) {
		i++
	}
	if i == 0 || i >= len(s) || s[i] != ':' || (i+1 < len(s) && s[i+1] != ' ') {
		return 0
	}
	if i <= len("false") && strings.IndexByte("yYnNtTfFoO", s[0]) >= 0 {
		for _, word := range []string{"y", "n", "yes", "no", "true", "false", "on", "off", "null"} {
			if strings.EqualFold(string(s[:i]), word) {
				return 0
			}
		}
	}
	return i
}

// isKeyByte: letters, digits and _ . / - , a letter or _ first.
func isKeyByte(c byte, first bool) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		return true
	case first:
		return false
	}
	return c >= '0' && c <= '9' || c == '.' || c == '/' || c == '-'
}

// Kinds of the value after "key:".
const (
	scalarValue = iota // nothing (a nested block follows, or null), or a one-line scalar
	blockScalar        // | or >, lines follow
	badValue           // not followed
)

func valueKind(v []byte) int {
	if len(v) == 0 || v[0] == '#' {
		return scalarValue
	}
	if v[0] == '|' || v[0] == '>' {
		// Indicators (|-, >+, |2), then at most a comment.
		i := 1
		for i < len(v) && (v[i] == '-' || v[i] == '+' || (v[i] >= '1' && v[i] <= '9')) {
			i++
		}
		if rest := bytes.TrimLeft(v[i:], " "); len(rest) == 0 || rest[0] == '#' {
			return blockScalar
		}
		return badValue
	}
	if plainValue(v) {
		return scalarValue
	}
	return badValue
}

// plainValue tells whether v is a scalar that ends on its line and opens no
// map: a plain scalar, a quoted one closed on the line, or a flow list of
// such (no '{' in it).
func plainValue(v []byte) bool {
	if len(v) == 0 {
		return true
	}
	switch v[0] {
	case '\'':
		return closedQuote(v, '\'')
	case '"':
		return closedQuote(v, '"')
	case '[':
		return !bytes.ContainsAny(v, "{&*!\"'") && bytes.HasSuffix(bytes.TrimRight(v, " "), []byte("]"))
	case '{', '&', '*', '!', '%', '@', '`', '?', '|', '>':
		return false
	}
	// A plain scalar; ": " or " #" in it is the parser's error or a
	// comment, neither a key of this map.
	return !bytes.Contains(v, []byte(": "))
}

// closedQuote tells whether the quoted scalar v closes on its line, with at
// most spaces and a comment after it.
func closedQuote(v []byte, quote byte) bool {
	for i := 1; i < len(v); i++ {
		switch {
		case quote == '"' && v[i] == '\\':
			i++
		case v[i] == quote && quote == '\'' && i+1 < len(v) && v[i+1] == '\'':
			i++
		case v[i] == quote:
			rest := bytes.TrimLeft(v[i+1:], " ")
			return len(rest) == 0 || rest[0] == '#'
		}
	}
	return false
}

// keysWrittenTwice returns the keys doc writes twice in one map, as
// yaml.v2 reads them and formatted %#v (as its strict errors name them),
// leaving out what merge keys (<<) bring: yaml.v2 decodes a map into a
// MapSlice with the keys the map writes and no other (mappingSlice sets
// the slice it built over what its merges set), strict or not. false when
// yaml.v2 does not read doc as a map.
func keysWrittenTwice(doc []byte) (map[string]bool, bool) {
	var m yamlv2.MapSlice
	if yamlv2.Unmarshal(doc, &m) != nil {
		return nil, false
	}
	twice := map[string]bool{}
	writtenTwice(m, twice, 0)
	return twice, true
}

func writtenTwice(v any, twice map[string]bool, depth int) {
	if depth > maxDepth {
		return // the load refuses it
	}
	switch v := v.(type) {
	case yamlv2.MapSlice:
		seen := make(map[any]bool, len(v))
		for _, item := range v {
			// A key that is a map or a list cannot be one of a map
			// (the load refuses it).
			if t := reflect.TypeOf(item.Key); t == nil || t.Comparable() {
				if seen[item.Key] {
					twice[fmt.Sprintf("%#v", item.Key)] = true
				}
				seen[item.Key] = true
			}
			writtenTwice(item.Value, twice, depth+1)
		}
	case []any:
		for _, e := range v {
			writtenTwice(e, twice, depth+1)
		}
	}
}
