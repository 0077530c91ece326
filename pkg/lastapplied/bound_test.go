package lastapplied

import (
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// bombJSON is `[{},{},…]` of about n bytes: cheap bytes, one map each.
func bombJSON(n int) []byte {
	return []byte("[" + strings.Repeat("{},", n/3) + "{}]")
}

// withCompact is a small object carrying raw as its compact record.
func withCompact(raw []byte) *unstructured.Unstructured {
	live := widget(map[string]any{"size": int64(3)})
	live.SetAnnotations(map[string]string{CompactAnnotation: string(raw)})
	return live
}

// TestCompactBombIsRefusedCheaply: a 43 KB annotation that unpacks to just
// under 32 MiB of `[{},{},…]` is refused as corrupt after unpacking at most
// its bound (1 MiB on a small object), without a single map decoded: a few
// MB allocated, where decoding it took 1 GB.
func TestCompactBombIsRefusedCheaply(t *testing.T) {
	packed, err := pack(bombJSON(maxUnpacked - 16))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("bomb: %d bytes packed", len(packed))
	live := withCompact(packed)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = Read(live)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrCompactCorrupt) || !strings.Contains(err.Error(), "unpacks to more than 1048576 bytes") {
		t.Fatalf("err %v, want ErrCompactCorrupt past 1 MiB", err)
	}
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 8<<20 {
		t.Errorf("reading the bomb allocated %d bytes", allocated)
	}
}

// TestCompactRecordBounds: within the bytes, a record is still refused for
// more JSON values or a deeper nesting than the object could have
// recorded, packed or in the unpacked form of earlier versions; the same
// record is read on an object as large as it is.
func TestCompactRecordBounds(t *testing.T) {
	manyValues := `{"spec":` + string(bombJSON(600<<10)) + `}`
	deep := `{"spec":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}`
	for _, c := range []struct {
		name, record, want string
	}{
		{"more values than the object could hold", manyValues, "more than 65536 JSON values"},
		{"deeper than the object could be", deep, "deeper than 64 levels"},
	} {
		packed, err := pack([]byte(c.record))
		if err != nil {
			t.Fatal(err)
		}
		for form, raw := range map[string]string{"packed": string(packed), "unpacked": c.record} {
			if form == "unpacked" && len(raw) > AnnotationLimit {
				continue
			}
			if _, err := Read(withCompact([]byte(raw))); !errors.Is(err, ErrCompactCorrupt) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s, %s: err %v, want ErrCompactCorrupt with %q", c.name, form, err, c.want)
			}
		}
	}
	// An object holding as much as its record: read.
	packed, err := pack([]byte(manyValues))
	if err != nil {
		t.Fatal(err)
	}
	big := widget(map[string]any{"items": make([]any, 300<<10)})
	big.SetAnnotations(map[string]string{CompactAnnotation: string(packed)})
	if record, err := Read(big); err != nil || record == nil {
		t.Errorf("a record no larger than its object: %v", err)
	}
}

// TestJSONShapeSkipsStrings: braces, commas and escaped quotes inside
// strings are not values.
func TestJSONShapeSkipsStrings(t *testing.T) {
	for _, c := range []struct {
		json string
		want shape
	}{
		{`{}`, shape{values: 2, depth: 1}},
		{`{"a":1,"b":[1,2]}`, shape{values: 7, depth: 2}},
		{`{"a":"{[,:\"]}"}`, shape{values: 3, depth: 1}},
		{`"\\"`, shape{values: 1}},
	} {
		if got := jsonShape([]byte(c.json)); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.json, got, c.want)
		}
	}
}

// TestCompactBombsInParallel: sixteen bombs read at once all fail as
// corrupt, and what they unpack at once stays within unpackingAtOnce.
func TestCompactBombsInParallel(t *testing.T) {
	packed, err := pack(bombJSON(maxUnpacked - 16))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for i := range errs {
		wg.Go(func() { _, errs[i] = Read(withCompact(packed)) })
	}
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, ErrCompactCorrupt) {
			t.Errorf("bomb %d: %v", i, err)
		}
	}
	if !unpacking.TryAcquire(unpackingAtOnce) {
		t.Error("the unpacking budget was not given back")
	}
	unpacking.Release(unpackingAtOnce)
}
