package jsonmap

import (
	"errors"
	"strings"
	"testing"
)

// edgeCases are inputs at the edges of the grammar and of the value
// conversions; they also seed FuzzObject.
var edgeCases = []string{
	// The top level.
	``, ` `, "\t\r\n", `null`, " null\n", `nul`, `nulx`, `null x`, `[]`, `[1]`, `[] x`,
	`"s"`, `1`, `-1.5`, `true`, `false`, `{`, `}`, `[`, `{}`, " \t\r\n{}\r\n\t ",
	`{} x`, `{}{}`, `{}}`, "{}\x00", "\xef\xbb\xbf{}", `{}/**/`, "\f{}", "\v{}", "\u00a0{}",
	// Members.
	`{"a":1}`, `{"a":1,}`, `{,}`, `{"a"}`, `{"a" 1}`, `{"a":}`, `{"a":1 "b":2}`, `{a:1}`,
	`{'a':1}`, `{"a":1,"a":2}`, `{"a":{"b":1},"a":{"c":2}}`, `{"\u0061":1,"a":2}`, `{"":""}`,
	`{"a"`, `{"a":`, `{"a":1`, `{"a":1,`, `{"a" : 1 , "b" : [ 1 , 2 ] }`, `{1:1}`, `{null:1}`,
	// Arrays.
	`{"a":[]}`, `{"a":[[]]}`, `{"a":[{}]}`, `{"a":[1,]}`, `{"a":[,1]}`, `{"a":[1 2]}`,
	`{"a":[1,"b",true,false,null,{"c":[]},-0.5]}`, `{"a":[`, `{"a":[1`, `{"a":[1,`, `{"a":]}`,
	// Literals.
	`{"a":true}`, `{"a":false}`, `{"a":null}`, `{"a":tru}`, `{"a":True}`, `{"a":truex}`,
	`{"a":nulll}`, `{"a":fals}`, `{"a":f}`, `{"a":n`,
	// Integers.
	`{"a":0}`, `{"a":-0}`, `{"a":7}`, `{"a":-7}`, `{"a":123456789012345678}`,
	`{"a":-123456789012345678}`, `{"a":1234567890123456789}`, `{"a":9223372036854775807}`,
	`{"a":9223372036854775808}`, `{"a":-9223372036854775808}`, `{"a":-9223372036854775809}`,
	`{"a":99999999999999999999999999999}`, `{"a":9007199254740993}`,
	`{"a":` + strings.Repeat("9", 400) + `}`, `{"a":` + strings.Repeat("9", 310) + `}`,
	// Floats.
	`{"a":0.0}`, `{"a":-0.0}`, `{"a":1.0}`, `{"a":1.5}`, `{"a":-1.5}`, `{"a":1e3}`, `{"a":1E3}`,
	`{"a":1e+3}`, `{"a":1e-3}`, `{"a":-0e0}`, `{"a":0e-0}`, `{"a":1.25e-2}`, `{"a":1e400}`,
	`{"a":-1e400}`, `{"a":1e-400}`, `{"a":-1e-400}`, `{"a":1.7976931348623157e308}`,
	`{"a":1.7976931348623159e308}`, `{"a":4.9e-324}`, `{"a":2e-324}`, `{"a":0.1e1}`,
	`{"a":123456789012345678901234567890.5}`, `{"a":1e00000000000000000001}`,
	// Malformed numbers.
	`{"a":01}`, `{"a":-01}`, `{"a":-}`, `{"a":1.}`, `{"a":.1}`, `{"a":1e}`, `{"a":1e+}`,
	`{"a":+1}`, `{"a":--1}`, `{"a":0x10}`, `{"a":1.5e}`, `{"a":Infinity}`, `{"a":NaN}`,
	`{"a":1.e3}`, `{"a":1e3.5}`, `{"a":1-}`, `{"a":-`, `{"a":1.`, `{"a":1e`, `{"a":1e-`,
	// Strings.
	`{"a":"\"\\\/\b\f\n\r\t"}`, `{"a":"\u00e9\u00E9"}`, `{"a":"\u0000"}`, `{"a":"\ud83d\ude00"}`,
	`{"a":"\ud83d"}`, `{"a":"\ude00"}`, `{"a":"\ude00\ud83d"}`, `{"a":"\ud83dx"}`,
	`{"a":"\ud83d\u0041"}`, `{"a":"\ud83d\ud83d\ude00"}`, `{"a":"\ud83d\n"}`, `{"a":"\ud83d\"}`,
	`{"a":"\ud83d\u12"}`, `{"a":"\ud83d\uzzzz"}`, `{"a":"\u12"}`, `{"a":"\u12g4"}`, `{"a":"\x"}`,
	`{"a":"\'"}`, `{"a":"\`, `{"a":"\u`, `{"a":"\u00`, `{"a":"abc`, `{"a":"abc}`, `{"a":"\U00e9"}`,
	"{\"a\":\"a\tb\"}", "{\"a\":\"a\nb\"}", "{\"a\":\"\x1f\"}", "{\"a\":\"\x7f\"}",
	"{\"a\":\"é ü 日本 😀\"}", "{\"a\":\"\xff\"}", "{\"a\":\"\xc3\"}", "{\"a\":\"\xc3x\"}",
	"{\"a\":\"\xed\xa0\x80\"}", "{\"a\":\"\xc0\xaf\"}", "{\"a\":\"\xf4\x90\x80\x80\"}",
	"{\"a\":\"\xef\xbf\xbd\"}", "{\"a\":\"\xe6\x97\"}", "{\"\xff\":1}", "{\"a\":\"x\\n\xff\"}",
	"{\"a\":\"\xf0\x9f\x98\"}", "{\"a\":\"\\u00e9\xe6\x97\xa5\"}",
}

func TestObjectAgreesOnEdgeCases(t *testing.T) {
	for _, data := range edgeCases {
		if err := disagreement([]byte(data)); err != nil {
			t.Error(err)
		}
	}
}

func TestObjectNesting(t *testing.T) {
	nested := func(depth int) string {
		// depth-1 arrays inside the top-level object.
		return `{"a":` + strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1) + `}`
	}
	for _, data := range []string{
		nested(2), nested(maxDepth), nested(maxDepth + 1), nested(maxDepth + 100),
		strings.Repeat(`{"a":`, maxDepth) + "1" + strings.Repeat("}", maxDepth),
		strings.Repeat(`{"a":`, maxDepth+1) + "1" + strings.Repeat("}", maxDepth+1),
		strings.Repeat(`{"a":[`, maxDepth), // too deep and cut short
	} {
		if err := disagreement([]byte(data)); err != nil {
			t.Errorf("%.40s... (%d bytes): %.200v", data, len(data), err)
		}
	}
}

// Errors say what and where; the tests elsewhere check only that both
// decoders refuse the same input.
func TestObjectErrorsSayWhere(t *testing.T) {
	cases := map[string]string{
		`{"a":1,}`:       `invalid character '}' looking for beginning of object key string at offset 7`,
		`{"a" 1}`:        `invalid character '1' after object key at offset 5`,
		`{"a":[1 2]}`:    `invalid character '2' after array element at offset 8`,
		`{"a":tru}`:      `invalid character '}' in literal true (expecting 'e') at offset 8`,
		`{"a":01}`:       `invalid character '1' after object key:value pair at offset 6`,
		`{"a":1.}`:       `invalid character '}' after decimal point in numeric literal at offset 7`,
		`{"a":1e400}`:    `number 1e400 out of the range of a float64 at offset 5`,
		`{"a":"\x"}`:     `invalid character 'x' in string escape code at offset 7`,
		`{"a":"\u12g4"}`: `invalid character 'g' in \u hexadecimal character escape at offset 10`,
		"{\"a\":\"\t\"}": `invalid character byte 0x09 in string literal at offset 6`,
		`{"a":`:          `unexpected end of JSON input at offset 5`,
		` []`:            `cannot decode a JSON array into an object at offset 1`,
		`{} x`:           `invalid character 'x' after top-level value at offset 3`,
	}
	for data, want := range cases {
		_, err := Object([]byte(data))
		var e *Error
		if !errors.As(err, &e) || err.Error() != want {
			t.Errorf("Object(%q) = %v, want %s", data, err, want)
		}
	}
}

func TestObjectNullIsNil(t *testing.T) {
	m, err := Object([]byte(" null "))
	if m != nil || err != nil {
		t.Errorf("Object(null) = %#v, %v; want a nil map and no error", m, err)
	}
}
