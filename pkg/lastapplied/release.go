package lastapplied

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/json"
)

// ErrNoRecord reports an object without a last-applied record, in kubectl's
// words.
var ErrNoRecord = errors.New("no last-applied-configuration annotation found on resource")

// Release returns the patch that removes the fields from live's last-applied
// record, so the next apply leaves them to whoever writes them imperatively
// (kubectl scale, an autoscaler) instead of deleting them when the file no
// longer sets them. Every path must name something in the record; nothing
// else of the object changes, and the patch carries live's resourceVersion.
func Release(live *unstructured.Unstructured, paths []FieldPath) ([]byte, error) {
	key, record, err := readRaw(live)
	if err != nil {
		return nil, err
	}
	for _, p := range paths {
		if err := p.Remove(record); err != nil {
			return nil, fmt.Errorf("releasing %s: %w (the last-applied record does not set it)", p, err)
		}
	}
	encoded, err := encodeRecord(key, record)
	if err != nil {
		return nil, err
	}
	return AnnotationPatch(key, encoded, live.GetResourceVersion())
}

// readRaw returns which annotation holds live's record, and the record.
func readRaw(live *unstructured.Unstructured) (string, map[string]any, error) {
	record, err := Read(live)
	if err != nil {
		return "", nil, err
	}
	if record == nil {
		return "", nil, fmt.Errorf("%w: %s", ErrNoRecord, live.GetName())
	}
	if _, full := live.GetAnnotations()[Annotation]; full {
		return Annotation, record, nil
	}
	return CompactAnnotation, record, nil
}

// encodeRecord writes a changed record back as the annotation it came from
// was written: kubectl's encoding for the full record, packed JSON for the
// compact one.
func encodeRecord(key string, record map[string]any) ([]byte, error) {
	if key == Annotation {
		return Encode(&unstructured.Unstructured{Object: record})
	}
	out, err := json.Marshal(record)
	if err != nil {
		return nil, fmt.Errorf("encoding the compact last-applied record: %w", err)
	}
	return pack(out)
}

// StillSet returns the paths the file still sets: the next apply would take
// them back from the imperative writer they were released to.
func StillSet(file *unstructured.Unstructured, paths []FieldPath) []FieldPath {
	var set []FieldPath
	for _, p := range paths {
		if _, err := p.Lookup(file.Object); err == nil {
			set = append(set, p)
		}
	}
	return set
}
