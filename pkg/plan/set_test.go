package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// twoContexts is a set of two plans: the sample and one creating a Secret.
func twoContexts(t testing.TB) *Set {
	t.Helper()
	secret := obj(t, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db","namespace":"eu"},"data":{"password":"c2VjcmV0LXZhbHVlLTQy"}}`)
	eu := &Plan{Cluster: Cluster{Server: "https://10.0.0.2:6443", ID: "eu-uid"}, Items: []Item{NewCreate(secret, Source{File: "s.yaml", Index: 1})}}
	return &Set{Plans: []Entry{{Context: "prod", Plan: samplePlan(t)}, {Context: "eu", Plan: eu}}}
}

func encodeSet(t testing.TB, s *Set) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := EncodeSet(&b, keyedSet(s)); err != nil {
		t.Fatalf("encoding: %v", err)
	}
	return b.Bytes()
}

func TestSetRoundTrip(t *testing.T) {
	s := twoContexts(t)
	data := encodeSet(t, s)
	if bytes.Contains(data, []byte("c2VjcmV0LXZhbHVlLTQy")) || bytes.Contains(data, []byte("secret-value-42")) {
		t.Fatalf("a Secret value is in the document:\n%s", data)
	}
	p, got, err := DecodeAny(bytes.NewReader(data))
	if err != nil || p != nil {
		t.Fatalf("decoding: %v, %v\n%s", p, err, data)
	}
	if !reflect.DeepEqual(got.Contexts(), []string{"prod", "eu"}) {
		t.Errorf("contexts %v", got.Contexts())
	}
	prod, ok := got.For("prod")
	if !ok || !reflect.DeepEqual(prod, saved(samplePlan(t))) {
		t.Errorf("the prod plan differs after a round trip:\n%#v", prod)
	}
	if _, ok := got.For("us"); ok {
		t.Error("a plan for a context the set does not hold")
	}
	if again := encodeSet(t, got); !bytes.Equal(again, data) {
		t.Errorf("encoding the decoded set gives other bytes")
	}
	// Each plan of the list is a whole plan document, as kapply plan
	// writes one: taken out, apply --plan reads it alone.
	var generic map[string]any
	if err := json.Unmarshal(data, &generic); err != nil {
		t.Fatal(err)
	}
	one, err := json.Marshal(generic["plans"].([]any)[0].(map[string]any)["plan"])
	if err != nil {
		t.Fatal(err)
	}
	if alone, err := Decode(bytes.NewReader(one)); err != nil || !reflect.DeepEqual(alone, saved(samplePlan(t))) {
		t.Errorf("one plan taken out: %v", err)
	}
}

// The single-context format reads as before, through either decoder; a
// PlanList given where one plan is read is refused with what to do.
func TestSetAndSinglePlanDecoders(t *testing.T) {
	single := encode(t, samplePlan(t))
	p, set, err := DecodeAny(bytes.NewReader(single))
	if err != nil || set != nil || !reflect.DeepEqual(p, saved(samplePlan(t))) {
		t.Fatalf("DecodeAny of one plan: %v %v", set, err)
	}
	_, err = Decode(bytes.NewReader(encodeSet(t, twoContexts(t))))
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "PlanList of 2 context(s)") || !strings.Contains(err.Error(), "--contexts") {
		t.Errorf("Decode of a PlanList: %v", err)
	}
}

func TestDecodeSetRefusesHostileDocuments(t *testing.T) {
	good := encodeSet(t, twoContexts(t))
	swapped := bytes.Replace(bytes.Replace(good, []byte(`"context":"prod"`), []byte(`"context":"tmp"`), 1), []byte(`"context":"eu"`), []byte(`"context":"prod"`), 1)
	cases := []struct {
		name string
		doc  []byte
		want string
	}{
		{"plans moved to other contexts", swapped, "the checksum does not match"},
		{"a plan removed", resumSet(t, good, func(d map[string]any) { d["plans"] = d["plans"].([]any)[:1] }), ""},
		{"an item edited, the list's checksum made again", resumSet(t, good, func(d map[string]any) {
			plans := d["plans"].([]any)
			items(plans[0].(map[string]any)["plan"].(map[string]any))[0].(map[string]any)["resourceVersion"] = "42"
		}), `the plan of context "prod"`},
		{"a context twice", resumSet(t, good, func(d map[string]any) {
			d["plans"].([]any)[1].(map[string]any)["context"] = "prod"
		}), `context "prod" has two plans`},
		{"no context", resumSet(t, good, func(d map[string]any) {
			d["plans"].([]any)[1].(map[string]any)["context"] = " "
		}), "names no context"},
		{"no plans", resumSet(t, good, func(d map[string]any) { d["plans"] = []any{} }), "holds no plan"},
		{"an unknown field", resumSet(t, good, func(d map[string]any) { d["extra"] = 1 }), "unknown field"},
		{"a list as a plan", resumSet(t, good, func(d map[string]any) {
			d["plans"].([]any)[0].(map[string]any)["plan"].(map[string]any)["kind"] = SetKind
		}), `kind "PlanList" is not`},
	}
	for _, c := range cases {
		_, _, err := DecodeAny(bytes.NewReader(c.doc))
		switch {
		case c.want == "" && err == nil:
			// A plan removed with the checksum made again is a smaller
			// list, as a run over fewer contexts writes: not refusable.
		case c.want == "":
			t.Errorf("%s: %v", c.name, err)
		case !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want):
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}

func TestEncodeSetRefusesWhatDecodeWouldRefuse(t *testing.T) {
	s := twoContexts(t)
	s.Plans[1].Context = "prod"
	if err := EncodeSet(&bytes.Buffer{}, s); !errors.Is(err, ErrInvalid) {
		t.Errorf("two plans of one context encoded: %v", err)
	}
	s = twoContexts(t)
	s.Plans[1].Plan.Cluster.Server = ""
	if err := EncodeSet(&bytes.Buffer{}, s); err == nil || !strings.Contains(err.Error(), `context "eu"`) {
		t.Errorf("a plan naming no cluster encoded: %v", err)
	}
}

// resumSet rewrites a PlanList through fn and gives it the checksum of
// its new content, as a hand edit that knows the scheme would.
func resumSet(t *testing.T, data []byte, fn func(map[string]any)) []byte {
	t.Helper()
	generic, ok := genericDocument(data)
	if !ok {
		t.Fatalf("not a document: %s", data)
	}
	fn(generic)
	out, _ := resummedList(generic)
	return out
}

// FuzzDecodeSet: any document read as either kind is decoded or refused
// with ErrInvalid, never a panic; a PlanList that decodes encodes again
// and decodes to the same plans. Each plan's checksum and the list's are
// made again for the fuzzer's document, so what they guard is fuzzed too.
func FuzzDecodeSet(f *testing.F) {
	f.Add(encodeSet(f, twoContexts(f)))
	f.Fuzz(func(t *testing.T, data []byte) {
		decodeSetAndReencode(t, data)
		if fixed, ok := withSetChecksums(data); ok {
			decodeSetAndReencode(t, fixed)
		}
	})
}

func decodeSetAndReencode(t *testing.T, data []byte) {
	_, set, err := DecodeAnyLimited(bytes.NewReader(data), 1<<20)
	if err != nil {
		if !errors.Is(err, ErrInvalid) {
			t.Fatalf("a refusal that is not ErrInvalid: %v", err)
		}
		return
	}
	if set == nil {
		return // one plan: FuzzDecode's
	}
	var b bytes.Buffer
	if err := EncodeSet(&b, set); err != nil {
		t.Fatalf("a decoded PlanList does not encode: %v", err)
	}
	_, again, err := DecodeAny(&b)
	if err != nil {
		t.Fatalf("an encoded PlanList does not decode: %v", err)
	}
	if !reflect.DeepEqual(again.Contexts(), set.Contexts()) {
		t.Fatalf("contexts %v became %v", set.Contexts(), again.Contexts())
	}
}

// withSetChecksums is data with each plan's checksum and the list's made
// for its content, when it has the shape of a PlanList.
func withSetChecksums(data []byte) ([]byte, bool) {
	return withChecksum(data)
}
