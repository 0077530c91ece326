package lastapplied

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/json"
)

const (
	// CompactAnnotation holds the compact record of an object whose full
	// record would pass the API server's annotation size limit.
	CompactAnnotation = "kapply.dev/last-applied-compact"
	// AnnotationLimit is the API server's limit on the total size of an
	// object's annotations, keys and values (262144 bytes).
	AnnotationLimit = 256 * 1024
	// elideOver is the length above which a string is replaced in the
	// compact record. Merge keys and set elements are shorter in practice,
	// so the record still identifies every element it must delete.
	elideOver = 64
)

// ErrTooLarge reports an object whose record does not fit even compacted.
var ErrTooLarge = fmt.Errorf("the last-applied record passes the API server's %d-byte annotation limit even compacted", AnnotationLimit)

// Attach returns a copy of obj carrying its last-applied record, as kubectl
// would write it. When that record would pass the API server's annotation
// limit — where kubectl fails with "metadata.annotations: Too long" — the
// copy carries instead, under CompactAnnotation, the record with every long
// string replaced by a digest: enough for the next apply to delete the
// fields and elements the file drops, which is all a record is used for.
// compacted reports which record was written.
func Attach(obj *unstructured.Unstructured) (out *unstructured.Unstructured, compacted bool, err error) {
	record, err := Encode(obj)
	if err != nil {
		return nil, false, err
	}
	others := otherAnnotationsSize(obj)
	if others+len(Annotation)+len(record) <= AnnotationLimit {
		return WithRecord(obj, record), false, nil
	}
	compact, err := compactRecord(record)
	if err != nil {
		return nil, false, err
	}
	if others+len(CompactAnnotation)+len(compact) > AnnotationLimit {
		return nil, false, fmt.Errorf("%w (%d bytes)", ErrTooLarge, others+len(compact))
	}
	out = obj.DeepCopy()
	annotations := out.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	delete(annotations, Annotation)
	annotations[CompactAnnotation] = string(compact)
	out.SetAnnotations(annotations)
	return out, true, nil
}

// otherAnnotationsSize counts the file's own annotations the way the API
// server does, leaving out both records.
func otherAnnotationsSize(obj *unstructured.Unstructured) int {
	n := 0
	for k, v := range obj.GetAnnotations() {
		if k != Annotation && k != CompactAnnotation {
			n += len(k) + len(v)
		}
	}
	return n
}

func compactRecord(record []byte) ([]byte, error) {
	var value any
	if err := json.Unmarshal(record, &value); err != nil {
		return nil, fmt.Errorf("compacting last-applied configuration: %w", err)
	}
	compact, err := json.Marshal(elide(value, false))
	if err != nil {
		return nil, fmt.Errorf("compacting last-applied configuration: %w", err)
	}
	return compact, nil
}

// elide replaces every string longer than elideOver outside lists by a
// digest of it, keeping the structure: map keys, list lengths and order,
// short values. Nothing inside a list is elided: set elements and the merge
// keys of list elements are what the next apply matches live elements by.
func elide(v any, inList bool) any {
	switch v := v.(type) {
	case map[string]any:
		for k, item := range v {
			v[k] = elide(item, inList)
		}
	case []any:
		for i, item := range v {
			v[i] = elide(item, true)
		}
	case string:
		if len(v) > elideOver && !inList {
			return digestOf(v)
		}
	}
	return v
}

// digestOf is how the compact record keeps a long string; other values have
// no digest.
func digestOf(v any) any {
	s, ok := v.(string)
	if !ok || len(s) <= elideOver {
		return nil
	}
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:16])
}

// DropStale marks for deletion, with null in the file's annotations, the
// kind of record (full or compact) that live still carries but file no
// longer uses, so Read never prefers a stale record. file must come from
// Attach, which always gives it an annotations map.
func DropStale(file, live *unstructured.Unstructured) {
	stale := CompactAnnotation
	if _, compact := file.GetAnnotations()[CompactAnnotation]; compact {
		stale = Annotation
	}
	if _, ok := live.GetAnnotations()[stale]; !ok {
		return
	}
	metadata, _ := file.Object["metadata"].(map[string]any)
	if annotations, ok := metadata["annotations"].(map[string]any); ok {
		annotations[stale] = nil
	}
}
