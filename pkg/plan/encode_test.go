package plan

import (
	"bytes"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestEncodeDecodeRoundTrip(t *testing.T) {
	p := samplePlan(t)
	data := encode(t, p)
	got, err := Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("decoding: %v\n%s", err, data)
	}
	if want := saved(p); !reflect.DeepEqual(got, want) {
		t.Errorf("round trip differs:\n got %#v\nwant %#v", got, want)
	}
	if again := encode(t, got); !bytes.Equal(again, data) {
		t.Errorf("encoding the decoded plan gives other bytes:\n%s\n%s", again, data)
	}
}

// TestRoundTripKeepsWhatExecutionReads: the patch bytes, identity and
// preconditions come back exactly, and paths keep typed key values (80 the
// number, not "80") so Lookup finds the element after a round trip.
func TestRoundTripKeepsWhatExecutionReads(t *testing.T) {
	p := samplePlan(t)
	got, err := Decode(bytes.NewReader(encode(t, p)))
	if err != nil {
		t.Fatal(err)
	}
	d := got.Items[0]
	if d.Action != Update || d.UID != "u-1" || d.ResourceVersion != "41" || d.LastApplied == "" || !bytes.Equal(d.Patch.Data, p.Items[0].Patch.Data) {
		t.Errorf("patch item: %+v", d)
	}
	keys := got.Items[5].Changes[0].Path[2].Keys
	if keys[0].Value != int64(80) {
		t.Errorf("key value %T %v, want int64 80", keys[0].Value, keys[0].Value)
	}
	if got.Items[0].Changes[0].Owners[0] != "kubectl-client-side-apply" {
		t.Errorf("owners lost: %+v", got.Items[0].Changes)
	}
}

func TestDecodeRefusesHostileDocuments(t *testing.T) {
	good := encode(t, samplePlan(t))
	cases := []struct {
		name string
		doc  []byte
		want string
	}{
		{"another apiVersion", bytes.Replace(good, []byte(`"kapply.dev/v1alpha2"`), []byte(`"kapply.dev/v2"`), 1), `apiVersion "kapply.dev/v2" is not supported`},
		{"another kind", bytes.Replace(good, []byte(`"kind":"Plan"`), []byte(`"kind":"Plot"`), 1), `kind "Plot" is not "Plan"`},
		{"made by an older kapply", bytes.Replace(good, []byte(`"kapply.dev/v1alpha2"`), []byte(`"kapply.dev/v1alpha1"`), 1), "made by an older kapply: run kapply plan again"},
		{"not JSON", []byte("apiVersion: kapply.dev/v1alpha2\nkind: Plan\n"), "not a JSON plan document"},
		{"edited by hand", bytes.Replace(good, []byte(`"resourceVersion":"41"`), []byte(`"resourceVersion":"42"`), 1), "the checksum does not match"},
		{"an item removed by hand", dropLine(good, 2), "the checksum does not match"},
		{"an item moved by hand", swapLines(good, 1, 2), "the checksum does not match"},
		{"a header field added after the items", bytes.Replace(good, []byte(`,"checksum"`), []byte(`,"settings":{"namespace":"x"},"checksum"`), 1), "the checksum does not match"},
		{"a list of plans in a plan", bytes.Replace(good, []byte(`,"checksum"`), []byte(`,"plans":[],"checksum"`), 1), `unknown field "plans" in a Plan`},
		{"something after the document", append(slices.Clone(good), []byte(`{}`)...), "something follows it"},
		{"an item that is not an object", reencode(t, good, func(d map[string]any) { d["items"] = append(items(d), "x") }), "item 7: json: cannot unmarshal string"},
		{"checksum removed", reencodeChecksum(t, good, ""), "has no checksum"},
		{"checksum of other content", reencodeChecksum(t, good, "sha256:"+strings.Repeat("0", 64)), "the checksum does not match"},
		{"unknown field", reencode(t, good, func(d map[string]any) { d["approvedBy"] = "me" }), `unknown field "approvedBy"`},
		{"duplicated field", bytes.Replace(good, []byte(`"kind":"Plan",`), []byte(`"kind":"Plan", "kind":"Plan",`), 1), `duplicate field "kind"`},
		{"duplicated field of an item", bytes.Replace(good, []byte(`"action":"patch",`), []byte(`"action":"patch","action":"patch",`), 1), `duplicate field "action"`},
		{"duplicated item", reencode(t, good, func(d map[string]any) { d["items"] = append(items(d), items(d)[0]) }), "item 7 (Deployment.apps/web -n prod) is item 1 again"},
		{"patch without resourceVersion", reencode(t, good, func(d map[string]any) { delete(item(d, 0), "resourceVersion") }),
			"item 1 (Deployment.apps/web -n prod): a patch item needs the live object's UID and resourceVersion"},
		{"create with a UID", reencode(t, good, func(d map[string]any) { item(d, 1)["uid"] = "u-9" }),
			"item 2 (ConfigMap/cfg -n prod): a create has no live object"},
		{"delete with a patch", reencode(t, good, func(d map[string]any) {
			item(d, 2)["patch"] = map[string]any{"type": "merge", "data": map[string]any{}}
		}),
			"item 3 (ConfigMap/old -n prod): a delete item sends no patch"},
		{"patch of the wrong type", reencode(t, good, func(d map[string]any) { item(d, 0)["patch"].(map[string]any)["type"] = "apply" }),
			"a patch item needs a patch of type strategic, merge or json"},
		{"labels besides the merged object", reencode(t, good, func(d map[string]any) { item(d, 1)["labels"] = map[string]any{"a": "b"} }),
			"item 2 (ConfigMap/cfg -n prod): an item holds its merged object or its labels, not both"},
		{"labels of a delete", reencode(t, good, func(d map[string]any) { item(d, 2)["labels"] = map[string]any{"a": "b"} }),
			"item 3 (ConfigMap/old -n prod): a delete item expects no object after it"},
		{"unknown action", reencode(t, good, func(d map[string]any) { item(d, 3)["action"] = "replace" }), `item 4 (Namespace/prod): unknown action "replace"`},
		{"unknown reason", reencode(t, good, func(d map[string]any) { change(d, 0, 0)["reason"] = "because" }), `change 1 has an unknown reason "because"`},
		{"path that does not parse", reencode(t, good, func(d map[string]any) { change(d, 0, 0)["path"] = "spec..paused" }), "change 1: invalid field path"},
		{"path step with empty keys", reencode(t, good, func(d map[string]any) { change(d, 0, 0)["path"] = "spec.ports[]" }), "change 1: invalid field path"},
		{"path as steps (an earlier layout)", reencode(t, good, func(d map[string]any) { change(d, 0, 0)["path"] = []any{map[string]any{"field": "spec"}} }), "item 1: json: cannot unmarshal array"},
		{"no cluster", reencode(t, good, func(d map[string]any) { d["cluster"] = map[string]any{"server": ""} }), "names no cluster"},
		// An item whose object is not the one its id names: a reviewer
		// reads the id, the server would write the object.
		{"merged of another name", reencode(t, good, func(d map[string]any) {
			item(d, 1)["merged"].(map[string]any)["metadata"].(map[string]any)["name"] = "other"
		}), "item 2 (ConfigMap/cfg -n prod): its object is ConfigMap/other -n prod"},
		{"merged in another namespace", reencode(t, good, func(d map[string]any) {
			item(d, 1)["merged"].(map[string]any)["metadata"].(map[string]any)["namespace"] = "kube-system"
		}), "its object is ConfigMap/cfg -n kube-system"},
		{"merged of another kind", reencode(t, good, func(d map[string]any) { item(d, 1)["merged"].(map[string]any)["kind"] = "Secret" }),
			"its object is Secret/cfg -n prod"},
		{"apply body of another object", reencode(t, good, func(d map[string]any) {
			item(d, 4)["patch"].(map[string]any)["data"].(map[string]any)["metadata"].(map[string]any)["name"] = "x"
		}), "item 5 (Widget.example.com/w -n prod): its object is Widget.example.com/x -n prod"},
		{"one object under two versions", reencode(t, good, func(d map[string]any) {
			again := map[string]any{"action": "delete", "uid": "u-1", "resourceVersion": "41",
				"id": map[string]any{"group": "apps", "version": "v1beta2", "kind": "Deployment", "namespace": "prod", "name": "web"}}
			d["items"] = append(items(d), again)
		}), "item 7 (Deployment.apps/web -n prod) is item 1 again"},
		{"no name", reencode(t, good, func(d map[string]any) { delete(item(d, 3)["id"].(map[string]any), "name") }), "version, kind and name must be set"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Decode(bytes.NewReader(c.doc))
			if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an ErrInvalid saying %q", err, c.want)
			}
		})
	}
}

func TestDecodeRefusesHugeDocumentsUnread(t *testing.T) {
	r := &countingReader{}
	_, err := DecodeLimited(r, 1<<20)
	if err == nil || !strings.Contains(err.Error(), "larger than 1048576 bytes") {
		t.Fatalf("got %v", err)
	}
	if r.n > 1<<20+1<<16 {
		t.Errorf("read %d bytes of an endless document", r.n)
	}
}

// countingReader is an endless document of spaces.
type countingReader struct{ n int }

func (r *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	r.n += len(p)
	return len(p), nil
}

func TestEncodeRefusesWhatDecodeWouldRefuse(t *testing.T) {
	p := samplePlan(t)
	p.Items[0].ResourceVersion = ""
	if err := Encode(&bytes.Buffer{}, p); err == nil || !strings.Contains(err.Error(), "item 1 (Deployment.apps/web -n prod)") {
		t.Errorf("got %v", err)
	}
}

func reencodeChecksum(t *testing.T, good []byte, sum string) []byte {
	doc := reencode(t, good, func(map[string]any) {})
	return bytes.Replace(doc, []byte(checksumOf(t, doc)), []byte(sum), 1)
}

func checksumOf(t *testing.T, doc []byte) string {
	i := bytes.LastIndex(doc, []byte(`"sha256:`)) // last: item digests come first
	if i < 0 {
		t.Fatal("no checksum")
	}
	return string(doc[i+1 : i+1+len("sha256:")+64])
}

func items(d map[string]any) []any                { return d["items"].([]any) }
func item(d map[string]any, i int) map[string]any { return items(d)[i].(map[string]any) }
func change(d map[string]any, i, j int) map[string]any {
	return item(d, i)["changes"].([]any)[j].(map[string]any)
}

// dropLine is doc without its line n (from 0): an item, one a line.
func dropLine(doc []byte, n int) []byte {
	lines := bytes.Split(doc, []byte("\n"))
	return bytes.Join(slices.Delete(lines, n, n+1), []byte("\n"))
}

// swapLines is doc with items on lines i and j (from 0) swapped.
func swapLines(doc []byte, i, j int) []byte {
	lines := bytes.Split(bytes.Clone(doc), []byte("\n"))
	a, b := bytes.TrimSuffix(lines[i], []byte(",")), bytes.TrimSuffix(lines[j], []byte(","))
	lines[i], lines[j] = append(b, ','), append(a, ',')
	return bytes.Join(lines, []byte("\n"))
}
