package lastapplied

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/internal/fixture"
	"github.com/kapply/kapply/pkg/fieldpath"
)

// noise is n bytes of deterministic text that gzip cannot shrink much
// (base64 of a hash chain): it forces the compact record to elide.
func noise(seed string, n int) string {
	var raw []byte
	sum := sha256.Sum256([]byte(seed))
	for len(raw)*4/3 < n {
		raw = append(raw, sum[:]...)
		sum = sha256.Sum256(sum[:])
	}
	return base64.StdEncoding.EncodeToString(raw)[:n]
}

// widget is a Widget (internal/fixture) named w with spec.
func widget(spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": fixture.WidgetGroup + "/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w"},
		"spec":     spec,
	}}
}

// bigSchema is a CRD-like object past the limit: structure and prose,
// every bit of it inside a list.
func bigSchema(elements int) *unstructured.Unstructured {
	versions := make([]any, 0, elements)
	for i := range elements {
		versions = append(versions, map[string]any{
			"name": "v" + strings.Repeat("1", i%7+1), "served": true,
			"schema": map[string]any{"description": strings.Repeat("The field configures the widget. ", 8) + noise(string(rune(i)), 8),
				"properties": map[string]any{"size": map[string]any{"type": "integer", "description": "How big the widget is, in widget units."}}},
		})
	}
	return widget(map[string]any{"versions": versions})
}

func TestAttachKeepsTheFullRecordUnderTheLimit(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}}}
	out, compacted, err := attachKeyed(obj)
	if err != nil || compacted {
		t.Fatalf("compacted %v, err %v", compacted, err)
	}
	if got := out.GetAnnotations()[Annotation]; got != `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"annotations":{},"name":"c"}}`+"\n" {
		t.Errorf("record %q", got)
	}
}

// TestAttachPacksTheExactRecord: past the limit, a compressible record is
// kept whole, gzipped: Read returns exactly what the full record holds, and
// the same object packs to the same annotation every time.
func TestAttachPacksTheExactRecord(t *testing.T) {
	obj := bigSchema(1200)
	full, err := Encode(obj)
	if err != nil {
		t.Fatal(err)
	}
	out, compacted, err := attachKeyed(obj)
	if err != nil || !compacted {
		t.Fatalf("compacted %v, err %v", compacted, err)
	}
	compact := out.GetAnnotations()[CompactAnnotation]
	t.Logf("full %d bytes, compact %d bytes", len(full), len(compact))
	if _, has := out.GetAnnotations()[Annotation]; has || len(full) <= AnnotationLimit {
		t.Fatalf("full record written (%v) or not past the limit (%d bytes)", has, len(full))
	}
	unpacked, err := unpack(compact, maxUnpacked)
	if err != nil || !bytes.Equal(unpacked, full) {
		t.Fatalf("compact record unpacks to %d bytes (err %v), want the %d bytes of the full record", len(unpacked), err, len(full))
	}
	again, _, err := attachKeyed(obj)
	if err != nil || again.GetAnnotations()[CompactAnnotation] != compact {
		t.Errorf("a second Attach packs differently (err %v)", err)
	}
	read, err := Read(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Read(WithRecord(obj, full))
	if err != nil || !reflect.DeepEqual(read, want) {
		t.Errorf("Read of the compact record differs from Read of the full one (err %v)", err)
	}
}

// TestAttachElidesWhatCannotIdentifyAnElement: when even the packed record
// is too large, long strings become digests — inside list elements too —
// except the scalar items of lists (set values) and the scalar fields of
// list elements (merge keys), which the next apply matches elements by.
func TestAttachElidesWhatCannotIdentifyAnElement(t *testing.T) {
	blob := noise("blob", 300*1024)
	url := "https://example.com/" + strings.Repeat("a", 100)
	key := "key-" + strings.Repeat("k", 100)
	text := "text-" + strings.Repeat("t", 100)
	obj := widget(map[string]any{
		"blob": blob,
		"urls": []any{url},
		"elems": []any{map[string]any{
			"name":   key,
			"nested": map[string]any{"text": text},
			"parts":  []any{map[string]any{"key": key, "more": map[string]any{"text": text}}},
			"matrix": []any{[]any{url}},
		}},
	})
	out, compacted, err := attachKeyed(obj)
	if err != nil || !compacted {
		t.Fatalf("compacted %v, err %v", compacted, err)
	}
	t.Logf("compact record %d bytes", len(out.GetAnnotations()[CompactAnnotation]))
	read, err := Read(out)
	if err != nil {
		t.Fatal(err)
	}
	spec := read["spec"].(map[string]any)
	elem := spec["elems"].([]any)[0].(map[string]any)
	part := elem["parts"].([]any)[0].(map[string]any)
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"blob", spec["blob"], digestOf(blob)},
		{"set item", spec["urls"].([]any)[0], url},
		{"merge key", elem["name"], key},
		{"nested merge key", part["key"], key},
		{"item of a nested list", elem["matrix"].([]any)[0].([]any)[0], url},
		{"field of a field of an element", elem["nested"].(map[string]any)["text"], digestOf(text)},
		{"field deeper in a nested element", part["more"].(map[string]any)["text"], digestOf(text)},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.what, c.got, c.want)
		}
	}
}

func TestAttachFailsWhenEvenTheDigestsDoNotFit(t *testing.T) {
	var keys []any
	for i := range 3000 {
		keys = append(keys, noise(string(rune(i)), 100))
	}
	_, _, err := attachKeyed(widget(map[string]any{"keys": keys}))
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err %v, want ErrTooLarge", err)
	}
}

// TestReadCompactRecords: a packed record, one written unpacked by earlier
// kapply versions, and corrupt ones (errors wrapping ErrCompactCorrupt,
// which apply treats as no record).
func TestReadCompactRecords(t *testing.T) {
	packed, err := pack([]byte(`{"spec":{"a":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	nullPacked, err := pack([]byte(`null`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, raw string
		malformed bool
	}{
		{"packed", string(packed), false},
		{"unpacked, as kapply wrote it before", `{"spec":{"a":1}}`, false},
		{"not base64", "not base64!", true},
		{"base64, not gzip", base64.StdEncoding.EncodeToString([]byte("plain")), true},
		{"truncated", string(packed[:len(packed)-8]), true},
		{"null", string(nullPacked), true},
	} {
		live := widget(nil)
		live.SetAnnotations(map[string]string{CompactAnnotation: c.raw})
		got, err := Read(live)
		switch {
		case c.malformed && !errors.Is(err, ErrCompactCorrupt):
			t.Errorf("%s: err %v, want ErrCompactCorrupt", c.name, err)
		case !c.malformed && (err != nil || !reflect.DeepEqual(got, map[string]any{"spec": map[string]any{"a": int64(1)}})):
			t.Errorf("%s: %v, err %v", c.name, got, err)
		}
	}
}

// TestViewAndReleaseUnpackTheCompactRecord: view-last-applied shows the
// record's JSON, and release writes the record back packed.
func TestViewAndReleaseUnpackTheCompactRecord(t *testing.T) {
	out, _, err := attachKeyed(bigSchema(1200))
	if err != nil {
		t.Fatal(err)
	}
	out.SetResourceVersion("7")
	view, err := View(out, "json", testKey)
	if err != nil || !bytes.HasPrefix(view, []byte("{\n  \"apiVersion\"")) {
		t.Fatalf("view %.40q, err %v", view, err)
	}
	patch, err := EditRecord(out, fieldpath.Fields("spec", "versions").Remove)
	if err != nil {
		t.Fatal(err)
	}
	released := widget(nil)
	if err := released.UnmarshalJSON(append([]byte(`{"apiVersion":"v1","kind":"X",`), patch[1:]...)); err != nil {
		t.Fatal(err)
	}
	record, err := Read(released)
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := record["spec"].(map[string]any)
	if _, has := spec["versions"]; has || record["kind"] != "Widget" || len(released.GetAnnotations()[CompactAnnotation]) > 1024 {
		t.Errorf("released record still has spec.versions (%v) or is not packed (%d bytes)", has, len(released.GetAnnotations()[CompactAnnotation]))
	}
}

// TestSameAsRecorded is how drift compares live with a record that may
// hold digests at any depth, inside atomic lists too.
func TestSameAsRecorded(t *testing.T) {
	long := strings.Repeat("d", 100)
	live := []any{map[string]any{"name": "a", "text": long, "n": int64(2)}}
	for _, c := range []struct {
		name     string
		recorded any
		same     bool
	}{
		{"whole", []any{map[string]any{"name": "a", "text": long, "n": int64(2)}}, true},
		{"digest inside a list", []any{map[string]any{"name": "a", "text": digestOf(long), "n": float64(2)}}, true},
		{"digest of another string", []any{map[string]any{"name": "a", "text": digestOf(long + "x"), "n": int64(2)}}, false},
		{"a field fewer", []any{map[string]any{"name": "a", "text": long}}, false},
		{"an element more", []any{map[string]any{"name": "a", "text": long, "n": int64(2)}, "b"}, false},
		{"a map for a list", map[string]any{"name": "a"}, false},
	} {
		if got := SameAsRecorded(live, c.recorded); got != c.same {
			t.Errorf("%s: %v, want %v", c.name, got, c.same)
		}
	}
}
