package lastapplied

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// The values of the test Secret, and their base64 forms: none may be in a
// redacted record.
const (
	tokenValue    = "tok-31f9c2"
	passwordValue = "pw-8e01aa"
)

func secretFile() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata":   map[string]any{"name": "creds", "namespace": "ns"},
		"type":       "Opaque",
		"data":       map[string]any{"token": b64(tokenValue), "same": b64(passwordValue)},
		"stringData": map[string]any{"password": passwordValue, "gone": nil}}}
}

func assertNoValues(t *testing.T, what, text string) {
	t.Helper()
	for _, v := range []string{tokenValue, passwordValue, b64(tokenValue), b64(passwordValue)} {
		if strings.Contains(text, v) {
			t.Errorf("%s holds the value %q:\n%s", what, v, text)
		}
	}
}

func recordMap(t *testing.T, obj *unstructured.Unstructured) map[string]any {
	t.Helper()
	record, err := Read(obj)
	if err != nil || record == nil {
		t.Fatalf("reading the record: %v (record %v)", err, record)
	}
	return record
}

// TestSecretRecordRedactsValuesKeepsKeys: the record keeps every key of
// data and stringData, a null stays null, each value is a 62-character
// digest under one salt, equal values under two keys differ, and the
// object sent keeps its values.
func TestSecretRecordRedactsValuesKeepsKeys(t *testing.T) {
	file := secretFile()
	out, compacted, err := attachKeyed(file)
	if err != nil || compacted {
		t.Fatalf("Attach: compacted %v, err %v", compacted, err)
	}
	annotation := out.GetAnnotations()[Annotation]
	assertNoValues(t, "the record", annotation)
	record := recordMap(t, out)
	data, plain := record["data"].(map[string]any), record["stringData"].(map[string]any)
	if len(data) != 2 || len(plain) != 2 || plain["gone"] != nil || record["type"] != "Opaque" {
		t.Fatalf("record keys: %s", annotation)
	}
	salts := map[salt]bool{}
	for key, v := range map[string]any{"data.token": data["token"], "data.same": data["same"], "stringData.password": plain["password"]} {
		r, ok := parseRedacted(v)
		if !ok || len(r.text) != 62 || len(r.text) > elideOver {
			t.Errorf("%s: %v is not a redacted value of 62 characters", key, v)
		}
		salts[r.salt] = true
	}
	if len(salts) != 1 {
		t.Errorf("%d salts in one record, want 1", len(salts))
	}
	if data["same"] == plain["password"] {
		t.Errorf("one value under two keys has one digest: %v", data["same"])
	}
	if out.Object["data"].(map[string]any)["token"] != b64(tokenValue) || out.Object["stringData"].(map[string]any)["password"] != passwordValue {
		t.Errorf("the object sent lost its values: %v", out.Object)
	}
}

// TestSecretRecordSalt: two new objects get different salts, so the same
// value has different digests; an object on the server keeps the salt of
// its record, so the same file gives the same record, byte for byte.
func TestSecretRecordSalt(t *testing.T) {
	first, _, err := attachKeyed(secretFile())
	if err != nil {
		t.Fatal(err)
	}
	second, _, err := attachKeyed(secretFile())
	if err != nil {
		t.Fatal(err)
	}
	if first.GetAnnotations()[Annotation] == second.GetAnnotations()[Annotation] {
		t.Errorf("two new Secrets have the same digests: %s", first.GetAnnotations()[Annotation])
	}
	live := first.DeepCopy()
	live.SetUID(types.UID("3f1c0d8e-5b7a-4e59-9a53-0c2a6d1e7b44"))
	again, _, err := AttachWith(secretFile(), Recording{Live: live, Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := again.GetAnnotations()[Annotation], first.GetAnnotations()[Annotation]; got != want {
		t.Errorf("re-applying the same file changes the record:\n got %s\nwant %s", got, want)
	}
}

// TestSecretRecordPlainIsKubectls: --secret-record=plain records what
// kubectl records (Encode, compared with kubectl's bytes elsewhere).
func TestSecretRecordPlainIsKubectls(t *testing.T) {
	out, _, err := AttachWith(secretFile(), Recording{Secrets: PlainSecrets})
	if err != nil {
		t.Fatal(err)
	}
	want, err := Encode(secretFile())
	if err != nil {
		t.Fatal(err)
	}
	if got := out.GetAnnotations()[Annotation]; got != string(want) {
		t.Errorf("plain record:\n got %s\nwant %s", got, want)
	}
	for _, s := range []string{"plain", "redacted"} {
		if mode, err := ParseSecretRecord(s); err != nil || mode.String() != s {
			t.Errorf("ParseSecretRecord(%q) = %v, %v", s, mode, err)
		}
	}
	if _, err := ParseSecretRecord("clear"); err == nil {
		t.Error(`ParseSecretRecord("clear"): no error`)
	}
}

// kubectlRecord is a plain record as kubectl writes it.
func kubectlRecord(t *testing.T) string {
	t.Helper()
	record, err := Encode(secretFile())
	if err != nil {
		t.Fatal(err)
	}
	return string(record)
}

// TestViewRedactsAPlainSecretRecord: a plain record on a Secret (kubectl's)
// is viewed redacted, the same each time (salt from the UID); a redacted
// record is viewed as it is; other kinds are untouched.
func TestViewRedactsAPlainSecretRecord(t *testing.T) {
	live := secretFile()
	live.SetUID(types.UID("9d2b1f4a-0c6e-4f7b-8a3d-5e1c2b7a9f60"))
	live.SetAnnotations(map[string]string{Annotation: kubectlRecord(t)})
	for _, format := range []string{"yaml", "json"} {
		out, err := View(live, format, testKey)
		if err != nil {
			t.Fatal(err)
		}
		assertNoValues(t, "view -o "+format, string(out))
		if !strings.Contains(string(out), redactedPrefix) || !strings.Contains(string(out), "password") {
			t.Errorf("view -o %s lacks the redacted keys:\n%s", format, out)
		}
		again, err := View(live, format, testKey)
		if err != nil || string(again) != string(out) {
			t.Errorf("view -o %s differs between two calls:\n%s\n%s", format, out, again)
		}
	}
	redactedOnce, _, err := AttachWith(secretFile(), Recording{Live: live, Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	live.SetAnnotations(redactedOnce.GetAnnotations())
	out, err := View(live, "json", testKey)
	if err != nil {
		t.Fatal(err)
	}
	var shown, stored map[string]any
	if json.Unmarshal(out, &shown) != nil || json.Unmarshal([]byte(redactedOnce.GetAnnotations()[Annotation]), &stored) != nil ||
		shown["data"].(map[string]any)["token"] != stored["data"].(map[string]any)["token"] {
		t.Errorf("a redacted record is not shown as stored:\n%s", out)
	}
}

// TestSetRecordRedactsAnEditedRecord: an edited record keeps the digests
// it shows, under their salt, and a value typed in is redacted with them.
func TestSetRecordRedactsAnEditedRecord(t *testing.T) {
	withRecord, _, err := attachKeyed(secretFile())
	if err != nil {
		t.Fatal(err)
	}
	edited := &unstructured.Unstructured{}
	if err := edited.UnmarshalJSON([]byte(withRecord.GetAnnotations()[Annotation])); err != nil {
		t.Fatal(err)
	}
	edited.Object["stringData"].(map[string]any)["added"] = tokenValue
	record, err := SetRecord(edited, withRecord, testKey)
	if err != nil {
		t.Fatal(err)
	}
	assertNoValues(t, "the set record", string(record))
	obj := map[string]any{}
	if err := json.Unmarshal(record, &obj); err != nil {
		t.Fatal(err)
	}
	before := recordMap(t, withRecord)
	plain := obj["stringData"].(map[string]any)
	kept, _ := parseRedacted(plain["password"])
	added, ok := parseRedacted(plain["added"])
	if plain["password"] != before["stringData"].(map[string]any)["password"] || !ok || added.salt != kept.salt || !added.matches(testKey, "added", []byte(tokenValue)) {
		t.Errorf("edited record: %s", record)
	}
}
