package plan

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/merge"
)

// Values of every shape, as pkg/secretmask's tests choose them: quotes and
// escapes, non-UTF-8 bytes, several lines, non-Latin text, HTML that JSON
// escapes, and a word.
var hostileValues = map[string]string{
	"quoted":  `pa"ss\word-Q7z`,
	"binary":  "\xff\xfe\x00bin-Kx9-\x80\xc3",
	"pem":     "-----BEGIN PRIVATE KEY-----\nMIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQCjwLsvckDWBxJp\n-----END PRIVATE KEY-----\n",
	"cyrill":  "пароль-секрет-42",
	"html":    "<script>&tok-Zq8</script>",
	"word":    "swordfishery",
	"oldonly": "retired-Vq3-value",
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// secretObjects are a live Secret (plain record, older values) and the
// file's (data and stringData, its plain record attached), as a run with
// --secret-record=plain sends them.
func secretObjects(t testing.TB) (file, live *unstructured.Unstructured, last map[string]any) {
	t.Helper()
	data := map[string]any{"binary": b64(hostileValues["binary"]), "pem": b64(hostileValues["pem"]), "html": b64(hostileValues["html"])}
	stringData := map[string]any{"quoted": hostileValues["quoted"], "cyrill": hostileValues["cyrill"], "word": hostileValues["word"]}
	file = &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "creds", "namespace": "prod"}, "data": data, "stringData": stringData}}
	record, err := lastapplied.Encode(file)
	if err != nil {
		t.Fatal(err)
	}
	file = lastapplied.WithRecord(file, record)
	last = map[string]any{"data": map[string]any{"oldonly": b64(hostileValues["oldonly"])}}
	oldRecord, err := json.Marshal(last)
	if err != nil {
		t.Fatal(err)
	}
	live = &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "creds", "namespace": "prod", "uid": "s-1", "resourceVersion": "3",
			"annotations": map[string]any{lastapplied.Annotation: string(oldRecord)}},
		"data": map[string]any{"oldonly": b64(hostileValues["oldonly"]), "html": b64("older-html-Wm2")}}}
	return file, live, last
}

// secretPlan plans the Secret by a real merge, adds a dry-run result
// holding the values as the server would (data, base64), and three more
// items of the same Secret's values: a create, a server-side apply and a
// JSON patch (under other names, one item per object).
func secretPlan(t testing.TB) (*Plan, *unstructured.Unstructured) {
	t.Helper()
	file, live, last := secretObjects(t)
	mp, err := merge.ThreeWay(last, file.Object, live.Object, nil)
	if err != nil {
		t.Fatal(err)
	}
	patch := FromMerge(file, live, Source{File: "secret.yaml", Index: 1}, mp, nil).KeyedBy(testKey, live)
	patch.Warnings = append(patch.Warnings, "server says: bad value "+strconv.Quote(hostileValues["quoted"]))
	dry := file.DeepCopy()
	for k, v := range hostileValues {
		dry.Object["data"].(map[string]any)[k] = b64(v)
	}
	patch.DryRunResult = dry.Object
	create := NewCreate(renamed(file, "creds-new"), Source{})
	ssa, err := NewServerSide(renamed(file, "creds-ssa"), nil, Source{})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := json.Marshal([]any{
		map[string]any{"op": "add", "path": "/data/html", "value": b64(hostileValues["html"])},
		map[string]any{"op": "replace", "path": "/stringData", "value": map[string]any{"word": hostileValues["word"]}},
		map[string]any{"op": "add", "path": "/metadata/annotations/" + strings.ReplaceAll(lastapplied.Annotation, "/", "~1"), "value": file.GetAnnotations()[lastapplied.Annotation]},
	})
	if err != nil {
		t.Fatal(err)
	}
	jsonPatch := Item{Action: Update, ID: ID{Version: "v1", Kind: "Secret", Namespace: "prod", Name: "creds-json"},
		UID: "s-2", ResourceVersion: "8", Patch: Patch{Type: JSONPatch, Data: ops}}
	return &Plan{Cluster: Cluster{Server: "https://k"}, Items: []Item{patch, create, ssa, jsonPatch}}, file
}

func renamed(u *unstructured.Unstructured, name string) *unstructured.Unstructured {
	out := u.DeepCopy()
	out.SetName(name)
	return out
}

// forms are the ways a value could be written in a document: as it is,
// escaped as JSON writes it (with and without HTML escaping), base64 in
// every alphabet, each line of several, and each of those quoted again.
func forms(v string) []string {
	out := []string{v, b64(v), base64.RawStdEncoding.EncodeToString([]byte(v)), base64.URLEncoding.EncodeToString([]byte(v))}
	quoted, _ := json.Marshal(v) //nolint:errcheck // a string always encodes
	out = append(out, string(quoted[1:len(quoted)-1]), strconv.Quote(v))
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err == nil {
		out = append(out, strings.TrimSuffix(strings.TrimSuffix(b.String(), "\n"), `"`)[1:])
	}
	for _, line := range strings.Split(v, "\n") {
		if len(line) > 8 && !strings.HasPrefix(line, "-----") {
			out = append(out, line)
		}
	}
	// Each form also as a JSON string inside a JSON string (a record in
	// an annotation, a quoted value in a warning).
	for _, f := range out[:len(out):len(out)] {
		twice, _ := json.Marshal(f) //nolint:errcheck // a string always encodes
		out = append(out, string(twice[1:len(twice)-1]))
	}
	return out
}

func TestEncodedPlanHoldsNoSecretValue(t *testing.T) {
	p, _ := secretPlan(t)
	data := encode(t, p)
	for name, v := range hostileValues {
		for _, f := range forms(v) {
			if bytes.Contains(data, []byte(f)) {
				t.Errorf("the value %s appears in the plan as %q", name, f)
			}
		}
	}
	if !bytes.Contains(data, []byte("kapply:hmac:")) {
		t.Errorf("no digest in the plan:\n%s", data)
	}
	// The keys stay: a reviewer sees which values change.
	for _, key := range []string{`"quoted"`, `"pem"`, `"oldonly"`} {
		if !bytes.Contains(data, []byte(key)) {
			t.Errorf("key %s missing from the plan", key)
		}
	}
}

// TestEncodeDoesNotChangeThePlan: redaction works on copies; the plan in
// memory, which the in-process Apply executes, keeps its values.
func TestEncodeDoesNotChangeThePlan(t *testing.T) {
	p, _ := secretPlan(t)
	before := p.Items[0].Patch.Data
	encode(t, p)
	if !bytes.Equal(before, p.Items[0].Patch.Data) || p.Items[1].Merged["stringData"].(map[string]any)["word"] != hostileValues["word"] {
		t.Error("Encode changed the plan it encoded")
	}
}

func TestWithSecretValuesRestoresWhatWasPlanned(t *testing.T) {
	p, file := secretPlan(t)
	decoded, err := decodeKeyed(bytes.NewReader(encode(t, p)))
	if err != nil {
		t.Fatal(err)
	}
	for i, it := range decoded.Items {
		if !it.HasRedactedValues() {
			t.Errorf("item %d (%s): a decoded Secret item must report digests in its write", i+1, it.ID)
		}
		restored, err := it.WithSecretValues(renamed(file, it.ID.Name))
		if err != nil {
			t.Fatalf("item %d: %v", i+1, err)
		}
		if restored.HasRedactedValues() {
			t.Errorf("item %d: digests left after restoring", i+1)
		}
		if it.Action != Create && !jsonEqual(t, restored.Patch.Data, p.Items[i].Patch.Data) {
			t.Errorf("item %d: restored patch\n%s\nwant\n%s", i+1, restored.Patch.Data, p.Items[i].Patch.Data)
		}
	}
	created, err := decoded.Items[1].WithSecretValues(renamed(file, "creds-new"))
	if err != nil || !jsonEqual(t, mustJSON(t, created.Merged), mustJSON(t, p.Items[1].Merged)) {
		t.Errorf("the created object is not restored: %v", err)
	}
}

func TestWithSecretValuesRefusesOtherValues(t *testing.T) {
	p, file := secretPlan(t)
	decoded, err := decodeKeyed(bytes.NewReader(encode(t, p)))
	if err != nil {
		t.Fatal(err)
	}
	changed := file.DeepCopy()
	changed.Object["stringData"].(map[string]any)["word"] = "another-value-Rr5"
	_, err = decoded.Items[0].WithSecretValues(changed)
	if !errors.Is(err, ErrSecretMismatch) || !strings.Contains(err.Error(), "stringData.word differ") {
		t.Fatalf("got %v, want a mismatch naming stringData.word", err)
	}
	if strings.Contains(err.Error(), "another-value") || strings.Contains(err.Error(), hostileValues["word"]) {
		t.Errorf("the error quotes a value: %v", err)
	}
	missing := file.DeepCopy()
	delete(missing.Object["data"].(map[string]any), "pem")
	if _, err := decoded.Items[0].WithSecretValues(missing); !errors.Is(err, ErrSecretMismatch) || !strings.Contains(err.Error(), "data.pem") {
		t.Errorf("a value the plan writes and the files lack: got %v", err)
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	return string(mustJSON(t, x)) == string(mustJSON(t, y))
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A server-side apply's or JSON patch's values are in its body alone (no
// merged object, no dry run): a warning quoting one is masked all the same.
func TestEncodeMasksWarningsQuotingAPatchBodysValue(t *testing.T) {
	ssa, err := NewServerSide(obj(t, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"p"},
		"stringData":{"k":"Sup3rS3cret-apply"}}`), nil, Source{})
	if err != nil {
		t.Fatal(err)
	}
	ssa.Warnings = []string{`value "Sup3rS3cret-apply" is weak`}
	ops := `[{"op":"add","path":"/data/k","value":"` + b64("Sup3rS3cret-json") + `"}]`
	jsonPatch := Item{Action: Update, ID: ID{Version: "v1", Kind: "Secret", Namespace: "p", Name: "j"},
		UID: "u", ResourceVersion: "1", Patch: Patch{Type: JSONPatch, Data: []byte(ops)},
		Warnings: []string{`value "Sup3rS3cret-json" is weak`}}
	data := encode(t, &Plan{Cluster: Cluster{Server: "https://k"}, Items: []Item{ssa, jsonPatch}})
	for _, v := range []string{"Sup3rS3cret-apply", "Sup3rS3cret-json"} {
		if bytes.Contains(data, []byte(v)) {
			t.Errorf("the document holds %q:\n%s", v, data)
		}
	}
}
