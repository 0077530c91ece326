package secretmask

import (
	"encoding/base64"
	"testing"
)

// TestTextMasksValuesOfEveryShape: values of shapes the first table did
// not hold, in the texts that carry them to the client: what YAML reads as
// a number, a boolean, a map or a list (the server-side apply error prints
// them as Go does); bytes that are not UTF-8 (a webhook's message reaches
// the client through JSON, each stray byte U+FFFD); one line of a PEM key;
// the parts of a .dockerconfigjson. The message's own words stay.
func TestTextMasksValuesOfEveryShape(t *testing.T) {
	const ssa = `failed to create typed patch object (m1/creds; /v1, Kind=Secret): errors:` + "\n"
	typed := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "creds", "namespace": "m1"},
		"stringData": map[string]any{"pin": int64(73519), "on": true, "ratio": 0.8317,
			"config": map[string]any{"password": "nested-hunter2-7q", "list": []any{"listed-hunter3-8w", "x"}}}}

	binary := "\xff\xfe\x00bin-Kx9-\x80\xc3"
	pemKey := "-----BEGIN PRIVATE KEY-----\nMIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQCjwLsvckDWBxJp\n" +
		"WE4G4kCDtrP6JbPrxmzgI9YAXTbAz8kJdao275isjaTpPta0lzsmqp2AZOD5damC\n-----END PRIVATE KEY-----\n"
	auth := base64.StdEncoding.EncodeToString([]byte("robot:Pw-Doc-9x7Q2z"))
	docker := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "pull", "namespace": "m1"},
		"data": map[string]any{".dockerconfigjson": b64(`{"auths":{"r.example.com":{"auth":"` + auth + `","email":"ops@example.com"}}}`)}}

	cases := []struct {
		name   string
		secret map[string]any
		text   string
		want   string
	}{
		{"numbers, booleans, maps and lists as server-side apply prints them", typed,
			ssa + "  .stringData.pin: expected string, got &value.valueUnstructured{Value:73519}\n" +
				"  .stringData.on: expected string, got &value.valueUnstructured{Value:true}\n" +
				"  .stringData.ratio: expected string, got &value.valueUnstructured{Value:0.8317}\n" +
				`  .stringData.config: expected string, got &value.valueUnstructured{Value:map[string]interface {}{"list":[]interface {}{"listed-hunter3-8w", "x"}, "password":"nested-hunter2-7q"}}` +
				"\n(port 73519 is true)",
			ssa + "  .stringData.pin: expected string, got &value.valueUnstructured{Value:***}\n" +
				"  .stringData.on: expected string, got &value.valueUnstructured{Value:***}\n" +
				"  .stringData.ratio: expected string, got &value.valueUnstructured{Value:***}\n" +
				`  .stringData.config: expected string, got &value.valueUnstructured{Value:map[string]interface {}{"list":[]interface {}{"***", "***"}, "password":"***"}}` +
				"\n(port 73519 is true)"},
		{"bytes that are not UTF-8, printed by a webhook", secret("creds", "m1", binary),
			`admission webhook "w" denied the request: bad bytes ` + string([]rune(binary)) + " and " + `"\xff\xfe\x00bin-Kx9-\x80\xc3"`,
			`admission webhook "w" denied the request: bad bytes *** and "***"`},
		{"one line of a PEM key; its BEGIN line is no secret", secret("tls", "m1", pemKey),
			"tls.key: bad key line MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQCjwLsvckDWBxJp after -----BEGIN PRIVATE KEY----- (line 2)",
			"tls.key: bad key line *** after -----BEGIN PRIVATE KEY----- (line 2)"},
		{"a .dockerconfigjson's auth, its user:password and its password", docker,
			`registry r.example.com: auth ` + auth + `, credentials "robot:Pw-Doc-9x7Q2z", password Pw-Doc-9x7Q2z refused for a robot`,
			`registry r.example.com: auth ***, credentials "***", password *** refused for a robot`},
	}
	for _, c := range cases {
		if got := Text(c.text, c.secret); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}
