package history

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func obj(t *testing.T, js string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(js), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

var testParent = Parent{SetID: "applyset-x-v1", Kind: "Secret", Namespace: "ns",
	Owner: metav1.OwnerReference{APIVersion: "v1", Kind: "Secret", Name: "set", UID: "u-1"}}

func TestScrubRemovesSecretValuesKeepsKeys(t *testing.T) {
	s := obj(t, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","annotations":{
		"kubectl.kubernetes.io/last-applied-configuration":"{\"data\":{\"k\":\"c2VjcmV0LXZhbHVl\"}}","keep":"me"}},
		"data":{"k":"c2VjcmV0LXZhbHVl"},"stringData":{"p":"hunter22"}}`)
	got := Scrub(s.Object)
	text, _ := json.Marshal(got)
	for _, value := range []string{"c2VjcmV0LXZhbHVl", "secret-value", "hunter22"} {
		if strings.Contains(string(text), value) {
			t.Fatalf("scrubbed Secret holds %q: %s", value, text)
		}
	}
	if got["data"].(map[string]any)["k"] != Removed || got["stringData"].(map[string]any)["p"] != Removed {
		t.Fatalf("keys not kept: %s", text)
	}
	if !strings.Contains(string(text), `"keep":"me"`) {
		t.Fatalf("other annotations dropped: %s", text)
	}
	if s.Object["data"].(map[string]any)["k"] != "c2VjcmV0LXZhbHVl" {
		t.Fatal("Scrub changed its input")
	}
	cm := obj(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":"v"}}`)
	if got := Scrub(cm.Object); got["data"].(map[string]any)["k"] != "v" {
		t.Fatalf("ConfigMap scrubbed: %v", got)
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	members := NewMembers([]*unstructured.Unstructured{
		obj(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b","namespace":"ns"},"data":{"k":"v"}}`),
		obj(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"a","namespace":"ns"},"spec":{"replicas":3}}`),
	})
	when := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	rev := Revision{Number: 4, Time: when, FieldManager: "kubectl-client-side-apply", User: "alice",
		ChangeCause: "v2", Counts: Counts{Members: 2, Added: 1}, Members: members}
	for _, kind := range []string{"Secret", "ConfigMap"} {
		p := testParent
		p.Kind = kind
		objs, err := Encode(rev, p, MaxChunk)
		if err != nil {
			t.Fatal(err)
		}
		if len(objs) != 1 || objs[0].GetName() != "set-rev-4-0" {
			t.Fatalf("%s: chunks %d, name %s", kind, len(objs), objs[0].GetName())
		}
		for k := range objs[0].GetLabels() {
			if strings.HasPrefix(k, "applyset.kubernetes.io/") {
				t.Fatalf("history object carries ApplySet label %s", k)
			}
		}
		if refs := objs[0].GetOwnerReferences(); len(refs) != 1 || refs[0].UID != "u-1" {
			t.Fatalf("owner references %v", refs)
		}
		listed := items(objs)
		revs, err := Revisions(listed)
		if err != nil {
			t.Fatal(err)
		}
		want := rev
		want.Members = nil
		if len(revs) != 1 || !revs[0].Time.Equal(when) || revs[0].User != "alice" || revs[0].Counts != rev.Counts || revs[0].Complete {
			t.Fatalf("%s: read %+v, want %+v", kind, revs, want)
		}
		got, err := Members(listed, 4)
		if err != nil {
			t.Fatal(err)
		}
		if !Same(got, members) || MemberID(got[1]) != "apps/Deployment ns/a" {
			t.Fatalf("%s: members %v", kind, got)
		}
	}
}

func items(objs []*unstructured.Unstructured) []unstructured.Unstructured {
	out := make([]unstructured.Unstructured, len(objs))
	for i, o := range objs {
		out[i] = *o
	}
	return out
}

// TestEncodeSplitsBigRevision: random (incompressible) values make a
// revision of several chunks, each within the limit, read back whole.
func TestEncodeSplitsBigRevision(t *testing.T) {
	noise := make([]byte, 300_000)
	if _, err := rand.Read(noise); err != nil {
		t.Fatal(err)
	}
	cm := obj(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big","namespace":"ns"}}`)
	cm.Object["data"] = map[string]any{"noise": base64.StdEncoding.EncodeToString(noise)}
	rev := Revision{Number: 1, Time: time.Now(), Members: NewMembers([]*unstructured.Unstructured{cm})}
	const limit = 100_000
	objs, err := Encode(rev, testParent, limit)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) < 3 {
		t.Fatalf("%d chunks, want ≥ 3", len(objs))
	}
	for i, o := range objs {
		b, err := chunkData(o)
		if err != nil || len(b) > limit {
			t.Fatalf("chunk %d: %d bytes, %v", i, len(b), err)
		}
		if o.GetName() != ChunkName("set", 1, i) {
			t.Fatalf("chunk %d named %s", i, o.GetName())
		}
	}
	got, err := Members(items(objs), 1)
	if err != nil || !Same(got, rev.Members) {
		t.Fatalf("read back: %v", err)
	}
	_, err = Members(items(objs[:len(objs)-1]), 1)
	if err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("missing chunk: %v", err)
	}
}

func TestStoredBytesHoldNoSecretValue(t *testing.T) {
	s := obj(t, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"ns"},"data":{"password":"aHVudGVyMjI="}}`)
	objs, err := Encode(Revision{Number: 1, Time: time.Now(), Members: NewMembers([]*unstructured.Unstructured{s})}, testParent, MaxChunk)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(objs[0].Object)
	b, _ := chunkData(objs[0])
	z, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(z)
	for _, text := range []string{string(raw), string(b), string(plain)} {
		for _, v := range []string{"aHVudGVyMjI=", "hunter22"} {
			if strings.Contains(text, v) {
				t.Fatalf("stored revision holds %q", v)
			}
		}
	}
	if !strings.Contains(string(plain), `"password":"`+Removed+`"`) {
		t.Fatalf("key not kept: %s", plain)
	}
}

func TestCompareAndDiff(t *testing.T) {
	v1 := NewMembers([]*unstructured.Unstructured{
		obj(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"ns"},"data":{"k":"1"}}`),
		obj(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"gone","namespace":"ns"},"data":{"k":"x"}}`),
	})
	v2 := NewMembers([]*unstructured.Unstructured{
		obj(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"ns"},"data":{"k":"2"}}`),
		obj(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"new","namespace":"ns"},"data":{"k":"y"}}`),
	})
	if c := Compare(v1, v2); c != (Counts{Members: 2, Added: 1, Changed: 1, Removed: 1}) {
		t.Fatalf("counts %+v", c)
	}
	if !Same(v1, v1) || Same(v1, v2) {
		t.Fatal("Same")
	}
	text, err := Diff(v1, v2, "revision 1", "revision 2")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"-  k: \"1\"", "+  k: \"2\"", "+++ revision 2 /ConfigMap ns/new", "--- revision 1 /ConfigMap ns/gone", "-  k: x"} {
		if !strings.Contains(text, want) {
			t.Fatalf("diff lacks %q:\n%s", want, text)
		}
	}
}

func TestExpiredAndNext(t *testing.T) {
	revs := []Revision{{Number: 3}, {Number: 4}, {Number: 5}}
	if got := Expired(revs, 2); len(got) != 1 || got[0] != 3 {
		t.Fatalf("Expired(2) = %v", got)
	}
	if got := Expired(revs, 0); len(got) != 3 {
		t.Fatalf("Expired(0) = %v", got)
	}
	if Next(revs) != 6 || Next(nil) != 1 {
		t.Fatal("Next")
	}
}

// TestMembersRefusesChunksOfTwoWrites: chunks of another write of the same
// number do not match the first chunk's checksum: an error, not a mixed
// revision.
func TestMembersRefusesChunksOfTwoWrites(t *testing.T) {
	big := func(seed string) Revision {
		noise := make([]byte, 200_000)
		if _, err := rand.Read(noise); err != nil {
			t.Fatal(err)
		}
		cm := obj(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"`+seed+`","namespace":"ns"}}`)
		cm.Object["data"] = map[string]any{"noise": base64.StdEncoding.EncodeToString(noise)}
		return Revision{Number: 1, Time: time.Now(), Members: NewMembers([]*unstructured.Unstructured{cm})}
	}
	a, err := Encode(big("a"), testParent, 100_000)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Encode(big("b"), testParent, 100_000)
	if err != nil {
		t.Fatal(err)
	}
	if SameHead(a[0], b[0]) || !SameHead(a[0], a[0].DeepCopy()) {
		t.Fatal("SameHead")
	}
	mixed := append([]*unstructured.Unstructured{a[0]}, b[1:]...)
	if _, err := Members(items(mixed), 1); err == nil || !strings.Contains(err.Error(), "do not match") {
		t.Fatalf("mixed chunks: %v", err)
	}
}
