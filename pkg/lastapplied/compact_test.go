package lastapplied

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestAttachCompactsOnlyOutsideLists: past the limit, long map values become
// digests while list elements (set values, merge keys) stay whole, so the
// next apply still matches and deletes them.
func TestAttachCompactsOnlyOutsideLists(t *testing.T) {
	long := strings.Repeat("x", 300*1024)
	url := "https://example.com/" + strings.Repeat("a", 100)
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w"},
		"spec":     map[string]any{"blob": long, "urls": []any{url}},
	}}
	out, compacted, err := Attach(obj)
	if err != nil || !compacted {
		t.Fatalf("compacted %v, err %v", compacted, err)
	}
	record := out.GetAnnotations()[CompactAnnotation]
	if len(record) > 1024 || !strings.Contains(record, url) || strings.Contains(record, long[:100]) {
		t.Errorf("compact record (%d bytes) keeps the list element %v, elides the blob %v", len(record), strings.Contains(record, url), !strings.Contains(record, long[:100]))
	}
	if _, full := out.GetAnnotations()[Annotation]; full {
		t.Errorf("full record written past the limit")
	}
	read, err := Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if got := read["spec"].(map[string]any)["blob"]; got != digestOf(long) {
		t.Errorf("blob read back as %v, want its digest", got)
	}
}

func TestAttachKeepsTheFullRecordUnderTheLimit(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}}}
	out, compacted, err := Attach(obj)
	if err != nil || compacted {
		t.Fatalf("compacted %v, err %v", compacted, err)
	}
	if got := out.GetAnnotations()[Annotation]; got != `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"annotations":{},"name":"c"}}`+"\n" {
		t.Errorf("record %q", got)
	}
}
