package secretmask

import (
	"encoding/base64"
	"strconv"
	"strings"
	"testing"
)

// secret is a v1 Secret "creds" in namespace "m1" (or as named) with the
// given values under data (base64-encoded, as stored).
func secret(name, namespace string, values ...string) map[string]any {
	data := map[string]any{}
	for i, v := range values {
		data[strconv.Itoa(i)] = base64.StdEncoding.EncodeToString([]byte(v))
	}
	return map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": name, "namespace": namespace}, "data": data}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// Texts of the API server (v1.37) and of kapply's error wrapping, as they
// were printed for a Secret creds in namespace m1: a ValidatingAdmissionPolicy
// whose messageExpression quotes data.k (CEL sees it base64-encoded), its
// Warn binding, a webhook's denial (which may decode the value), a field
// error (%q) and kapply's prefix.
const (
	prefix     = "secret/creds -n m1 (from /tmp/TestX/001/secret.yaml): creating: "
	policyDeny = `secrets "creds" is forbidden: ValidatingAdmissionPolicy 'quote-deny' with binding 'quote-deny' denied request: `
	policyWarn = `Validation failed for ValidatingAdmissionPolicy 'quote-warn' with binding 'quote-warn': `
	webhook    = `admission webhook "deny.example.com" denied the request: `
)

// TestTextMasksValuesNotWords: each value is masked where the text quotes
// it, gives it as a field's value, or (when it cannot be an ordinary word
// or number) anywhere, in each form a message writes it; the same text as
// an ordinary word, the Secret's own name and namespace where the message
// names it, and other text are left.
func TestTextMasksValuesNotWords(t *testing.T) {
	pass := `pa"ss<>&é`
	cases := []struct {
		name   string
		secret map[string]any
		text   string
		want   string
	}{
		{"a word quoted in base64 by a policy", secret("creds", "m1", "secret"),
			prefix + policyDeny + `secret value "c2VjcmV0" is not allowed for a secret; key: c2VjcmV0`,
			prefix + policyDeny + `secret value "***" is not allowed for a secret; key: ***`},
		{"a word quoted by a webhook, and as key=value", secret("creds", "m1", "secret"),
			webhook + `the secret's value "secret" is a secret word; password=secret, 'secret' or ` + "`secret`",
			webhook + `the secret's value "***" is a secret word; password=***, '***' or ` + "`***`"},
		{"a word at the end, as a field's value", secret("creds", "m1", "secret"),
			policyWarn + "the secret is: secret", policyWarn + "the secret is: ***"},
		{"a word followed by more words after a colon is running text", secret("creds", "m1", "secret"),
			policyDeny + "secret values must be rotated", policyDeny + "secret values must be rotated"},
		{"a field error quotes with %q", secret("creds", "m1", "secret"),
			`Secret "creds" is invalid: data[k]: Invalid value: "secret": must not be a secret`,
			`Secret "creds" is invalid: data[k]: Invalid value: "***": must not be a secret`},
		{"a value equal to a JSON key is left there", secret("creds", "m1", "data"),
			`Invalid value: "{\"data\":{\"k\":\"data\"}}": data is bad`,
			`Invalid value: "{\"data\":{\"k\":\"***\"}}": data is bad`},
		{"short values: a letter, a digit, a boolean", secret("creds", "m1", "a", "1", "true"),
			webhook + `a value of 1 is not true: want "a", got 1, enabled=true, count: 1`,
			webhook + `a value of 1 is not true: want "***", got 1, enabled=***, count: ***`},
		{"regexp metacharacters", secret("creds", "m1", `a.*b(c)?[d]`),
			webhook + `got a.*b(c)?[d] and "a.*b(c)?[d]", not aXXb`,
			webhook + `got *** and "***", not aXXb`},
		{"quotes, HTML characters and unicode in every escape", secret("creds", "m1", pass),
			policyDeny + `secret value "cGEic3M8PibDqQ==" is not allowed; key: cGEic3M8PibDqQ==` +
				`; go "pa\"ss<>&é" ascii "pa\"ss<>&\u00e9" json {"k":"pa\"ss\u003c\u003e\u0026é"} raw pa"ss<>&é`,
			policyDeny + `secret value "***" is not allowed; key: ***; go "***" ascii "***" json {"k":"***"} raw ***`},
		{"a JSON body quoted in a message", secret("creds", "m1", pass),
			webhook + `body "{\"k\":\"pa\\\"ss\\u003c\\u003e\\u0026é\"}"`,
			webhook + `body "{\"k\":\"***\"}"`},
		{"a value of several lines", secret("creds", "m1", "line-one\nline-two"),
			webhook + "raw line-one\nline-two, quoted \"line-one\\nline-two\"",
			webhook + `raw ***, quoted "***"`},
		{"a word with a newline, as echo | base64 makes it", secret("creds", "m1", "secret\n"),
			webhook + `the secret "secret\n" (c2VjcmV0Cg==) or "secret"`,
			webhook + `the secret "***" (***) or "***"`},
		{"unicode words", secret("creds", "m1", "pässwörd", "密码"),
			webhook + `pässwörd is a word; "pässwörd" and '密码' are values; 密码学`,
			webhook + `pässwörd is a word; "***" and '***' are values; 密码学`},
		{"a value inside a longer value", secret("creds", "m1", "abc-12345", "abc-12345-xyz"),
			webhook + `"abc-12345-xyz", abc-12345. and abc-12345-xyz`,
			webhook + `"***", ***. and ***`},
		{"a short unusual value only where no word continues it", secret("creds", "m1", "x9-z"),
			webhook + `x9-z, ax9-z and x9-zz, "x9-z"`,
			webhook + `***, ax9-z and x9-zz, "***"`},
		{"the empty value masks nothing", secret("creds", "m1", ""),
			webhook + `empty "" value=`, webhook + `empty "" value=`},
		{"a value equal to the Secret's name", secret("creds", "m1", "creds"),
			prefix + `secrets "creds" is forbidden: the value "creds" is the name`,
			prefix + `secrets "creds" is forbidden: the value "***" is the name`},
		{"a random value equal to the Secret's name", secret("db-creds-2024", "m1", "db-creds-2024"),
			`secret/db-creds-2024 -n m1: Operation cannot be fulfilled on secrets "db-creds-2024": the value db-creds-2024 is the name`,
			`secret/db-creds-2024 -n m1: Operation cannot be fulfilled on secrets "db-creds-2024": the value *** is the name`},
		{"a value equal to the namespace", secret("creds", "team-a-2", "team-a-2"),
			`secret/creds -n team-a-2: namespaces "team-a-2" not found; in namespace team-a-2 the value is "team-a-2"`,
			`secret/creds -n team-a-2: namespaces "team-a-2" not found; in namespace team-a-2 the value is "***"`},
		{"a value the message does not quote (bad base64 in the file)", map[string]any{"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": "creds"}, "data": map[string]any{"k": "secret"}},
			`Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 4`,
			`Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 4`},
		{"a []byte as Go prints it", secret("creds", "m1", "secret"),
			webhook + `data map[k:[115 101 99 114 101 116]]`, webhook + `data map[k:***]`},
		{"a warning cut by the server inside a long value", secret("creds", "m1", "tok-0123456789abcdef"),
			policyWarn + "the value tok-0123456", policyWarn + "the value ***"},
		{"a text ending in a word a long value starts with", secret("creds", "m1", "secretive-7x9k2mpq"),
			policyWarn + "about a secret", policyWarn + "about a secret"},
		{"base64 forms, std and URL, padded and raw", secret("creds", "m1", "?>?>?>s"),
			webhook + "Pz4_Pj8-cw== Pz4/Pj8+cw Pz4_Pj8-cw", webhook + "*** *** ***"},
		{"stringData values, a number among them", map[string]any{"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": "creds"}, "stringData": map[string]any{"pin": 4242, "p": "hunter2-x"}},
			webhook + `pin "4242" (port 4242), hunter2-x`, webhook + `pin "***" (port 4242), ***`},
	}
	for _, c := range cases {
		cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"k": "forbidden"}}
		if got := Text(c.text, c.secret, cm, nil); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

// TestTextLeavesNoForm: for adversarial values, no form the masker knows
// (plain, quoted, base64) is left in a text that quotes every form, and
// the message's own words stay.
func TestTextLeavesNoForm(t *testing.T) {
	values := []string{"secret", "data", "a", "1", "true", `a.*b(c)?[d]`, `"'` + "`", "x\ny", "日本語", "creds", "m1",
		"abc", "abcd", "tok-0123456789abcdef", "\\", "  padded  ", "forbidden"}
	for _, v := range values {
		var text strings.Builder
		text.WriteString(prefix + policyDeny)
		for _, f := range formsOf([]string{v}) {
			text.WriteString(` "` + f + `" and value=` + f + ",")
		}
		got := Text(text.String(), secret("creds", "m1", v))
		rest, ok := strings.CutPrefix(got, prefix+policyDeny)
		if !ok {
			t.Errorf("value %q: the message changed:\n%s", v, got)
			continue
		}
		for _, f := range formsOf([]string{v}) {
			if strings.Contains(rest, `"`+f+`"`) || strings.Contains(rest, "="+f+",") {
				t.Errorf("value %q: form %q left in\n%s", v, f, got)
			}
		}
	}
}

// BenchmarkText masks a policy's denial with the values of one Secret,
// and a warning with those of 1000 Secrets (a command that read many).
func BenchmarkText(b *testing.B) {
	text := prefix + policyDeny + `secret value "c2VjcmV0" is not allowed for a secret; key: c2VjcmV0`
	one := []map[string]any{secret("creds", "m1", "secret", "tok-0123456789abcdef")}
	var many []map[string]any
	for i := range 1000 {
		many = append(many, secret("s"+strconv.Itoa(i), "m1", "value-"+strconv.Itoa(i), "secret"))
	}
	for _, c := range []struct {
		name    string
		secrets []map[string]any
	}{{"one", one}, {"1000", many}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				Text(text, c.secrets...)
			}
		})
	}
}

// FuzzText: any text and value: no panic, and a value the text quotes is
// masked.
func FuzzText(f *testing.F) {
	f.Add(prefix+policyDeny+`secret value "c2VjcmV0"`, "secret")
	f.Add(`"\"a\""`, `"a"`)
	f.Add("x", "")
	f.Fuzz(func(t *testing.T, text, value string) {
		obj := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": value},
			"stringData": map[string]any{"k": value}}
		Text(text, obj)
		quoted := `(` + strconv.Quote(value) + `)`
		// A value equal to the mask is masked into itself.
		if strings.TrimSpace(value) != "" && value != Mask && strings.Contains(Text(quoted, obj), strconv.Quote(value)) {
			t.Errorf("value %q left in %s", value, Text(quoted, obj))
		}
	})
}

// BenchmarkMasker masks the same denial with a Masker that holds the
// values of 1, 100 and 1000 Secrets already (an operation that read
// many): the cost of one text, without computing the forms.
func BenchmarkMasker(b *testing.B) {
	text := prefix + policyDeny + `secret value "c2VjcmV0" is not allowed for a secret; key: c2VjcmV0`
	for _, n := range []int{1, 100, 1000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			var m Masker
			for i := range n {
				m.Add(secret("s"+strconv.Itoa(i), "m1", "value-"+strconv.Itoa(i), "secret"))
			}
			m.Text(text)
			for b.Loop() {
				m.Text(text)
			}
		})
	}
}
