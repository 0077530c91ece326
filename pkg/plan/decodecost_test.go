package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// allocatedBy is what fn allocated, in bytes.
func allocatedBy(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// bogusDocument is a document of kind with a wrong checksum whose one item
// holds a body of size bytes of empty lists: "[],[],...".
func bogusDocument(kind string, size int) []byte {
	var b bytes.Buffer
	item := `{"action":"patch","id":{"version":"v1","kind":"ConfigMap","name":"a"},"merged":{"a":[`
	switch kind {
	case SetKind:
		b.WriteString(`{"apiVersion":"` + APIVersion + `","kind":"PlanList","checksum":"sha256:00","plans":[{"context":"c","plan":{"apiVersion":"` + APIVersion + `","kind":"Plan","checksum":"sha256:00","cluster":{"server":"https://x"},"items":[` + item)
	default:
		b.WriteString(`{"apiVersion":"` + APIVersion + `","kind":"Plan","checksum":"sha256:00","cluster":{"server":"https://x"},"items":[` + item)
	}
	for b.Len() < size {
		b.WriteString("[],")
	}
	b.WriteString("[]]}}]")
	if kind == SetKind {
		b.WriteString("}}]")
	}
	b.WriteString("}\n")
	return b.Bytes()
}

// TestDecodeRefusesACostlyBodyUnread: a 9 MB plan (or list of plans) whose
// body is nothing but empty lists, with a wrong checksum, is refused before
// it is decoded, allocating a few times its size. Decoded first (as
// before), it took 600 MB of allocations (330 MB RSS in kapply) to reach
// its checksum.
func TestDecodeRefusesACostlyBodyUnread(t *testing.T) {
	for _, kind := range []string{Kind, SetKind} {
		doc := bogusDocument(kind, 9<<20)
		var err error
		allocated := allocatedBy(func() { _, _, err = DecodeAny(bytes.NewReader(doc)) })
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "to decode") {
			t.Errorf("%s: %v, want refused for what it would take to decode", kind, err)
		}
		// 8x its size: the item's bytes are read, and the decoder's
		// buffer grows by doubling (50 MB seen, 59 MB under the race
		// detector); far below the 600 MB of a decode.
		if limit := uint64(8 * len(doc)); allocated > limit {
			t.Errorf("%s of %d bytes: refusing it allocated %d MB, want at most %d MB", kind, len(doc), allocated>>20, limit>>20)
		}
	}
}

// TestDecodeBoundsTheCostOfAllItems: items each cheap enough alone, but
// costly together (their decoded values are held until the checksum after
// the last), are refused before the document is decoded whole.
func TestDecodeBoundsTheCostOfAllItems(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`{"apiVersion":"` + APIVersion + `","kind":"Plan","cluster":{"server":"https://x"},"items":[`)
	for i := range 40 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"action":"patch","id":{"version":"v1","kind":"ConfigMap","name":"a` + strconv.Itoa(i) + `"},"merged":{"a":[`)
		b.WriteString(strings.Repeat("[],", 100<<10/3))
		b.WriteString("[]]}}")
	}
	b.WriteString(`],"checksum":"sha256:00"}`)
	doc := b.Bytes()
	if one := decodeCost(doc) / 40; one > decodeCostFloor {
		t.Fatalf("an item alone estimates at %d MB, over the floor: it tests nothing", one>>20)
	}
	var err error
	allocated := allocatedBy(func() { _, err = Decode(bytes.NewReader(doc)) })
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "to decode") {
		t.Errorf("%v, want refused for what it would take to decode", err)
	}
	if limit := uint64(8 * len(doc)); allocated > limit {
		t.Errorf("refusing %d bytes allocated %d MB, want at most %d MB", len(doc), allocated>>20, limit>>20)
	}
}

// bigPlan is a plan of Deployment patches whose document is at least size
// bytes.
func bigPlan(t *testing.T, size int) []byte {
	t.Helper()
	p := &Plan{Cluster: Cluster{Server: "https://x"}}
	item := namedDeploymentItem(t, "web")
	var doc bytes.Buffer
	for doc.Len() < size {
		for range 200 {
			one := namedDeploymentItem(t, "web-"+strconv.Itoa(len(p.Items)))
			one.Changes = item.Changes
			p.Items = append(p.Items, one)
		}
		doc.Reset()
		if err := Encode(&doc, p); err != nil {
			t.Fatal(err)
		}
	}
	return doc.Bytes()
}

// TestDecodeBoundsAWrongChecksum: a plan of ordinary shape with a wrong
// checksum is decoded to compare it, and refused, allocating a small
// multiple of its size; the same plan compacted (jq -c), whose decoding
// costs more per byte, still reads — the bound is far from real plans.
func TestDecodeBoundsAWrongChecksum(t *testing.T) {
	doc := bigPlan(t, 6<<20)
	edited := bytes.Replace(doc, []byte(`"nginx:2"`), []byte(`"nginx:3"`), 1)
	var err error
	allocated := allocatedBy(func() { _, err = Decode(bytes.NewReader(edited)) })
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "checksum does not match") {
		t.Errorf("edited plan: %v, want refused for its checksum", err)
	}
	if limit := uint64(maxDecodeFactor * len(doc)); allocated > limit {
		t.Errorf("edited plan of %d bytes: refusing it allocated %d MB, want at most %d MB", len(doc), allocated>>20, limit>>20)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, doc); err != nil {
		t.Fatal(err)
	}
	if cost := decodeCost(compact.Bytes()); cost <= decodeCostFloor {
		t.Fatalf("the compacted plan estimates at %d MB, under the floor: it tests nothing", cost>>20)
	}
	if _, err := Decode(&compact); err != nil {
		t.Errorf("the plan compacted (%d bytes, estimated %d MB to decode): %v", compact.Len(), decodeCost(compact.Bytes())>>20, err)
	}
}
