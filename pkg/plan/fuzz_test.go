package plan

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// FuzzDecode: any document is decoded or refused with ErrInvalid, never
// a panic; what decodes encodes again and decodes to the same plan. Seeds
// are a valid plan, a Secret's plan and the committed corpus under
// testdata/fuzz/FuzzDecode (hostile shapes: deep nesting, huge numbers,
// odd paths).
func FuzzDecode(f *testing.F) {
	f.Add(encode(f, samplePlan(f)))
	secrets, _ := secretPlan(f)
	f.Add(encode(f, secrets))
	f.Fuzz(func(t *testing.T, data []byte) {
		decodeAndReencode(t, data)
		// A fuzzer cannot forge a SHA-256: give the document its
		// checksum too, so that what the checksum guards is fuzzed.
		if fixed, ok := withChecksum(data); ok {
			decodeAndReencode(t, fixed)
		}
	})
}

// decodeAndReencode: data decodes or is refused with ErrInvalid; a
// decoded plan encodes, and its encoding is a fixed point (a Secret's
// plain values become digests on the first encoding, and stay).
func decodeAndReencode(t *testing.T, data []byte) {
	const limit = 1 << 20
	p, err := DecodeLimited(bytes.NewReader(data), limit)
	if err != nil {
		if !errors.Is(err, ErrInvalid) {
			t.Fatalf("a refusal that is not ErrInvalid: %v", err)
		}
		return
	}
	q := mustReencode(t, p)
	if r := mustReencode(t, q); !reflect.DeepEqual(q, r) {
		t.Fatalf("decode → encode → decode is no fixed point:\n%#v\n%#v", q, r)
	}
}

func mustReencode(t *testing.T, p *Plan) *Plan {
	var b bytes.Buffer
	if err := Encode(&b, p); err != nil {
		t.Fatalf("a decoded plan does not encode: %v", err)
	}
	q, err := Decode(&b)
	if err != nil {
		t.Fatalf("an encoded plan does not decode: %v\n%s", err, b.Bytes())
	}
	return q
}

// withChecksum is data with the checksum of its content, when it has the
// shape of a plan document.
func withChecksum(data []byte) ([]byte, bool) {
	doc, ok := genericDocument(data)
	if !ok {
		return nil, false
	}
	out, _ := resummed(doc)
	return out, true
}
