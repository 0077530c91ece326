package lastapplied

import (
	"encoding/base64"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/json"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/shown"
)

// ErrNoRecord reports an object without a last-applied record, in kubectl's
// words.
var ErrNoRecord = errors.New("no last-applied-configuration annotation found on resource")

// HasRecord reports whether live carries a last-applied record, full or
// compact.
func HasRecord(live *unstructured.Unstructured) bool {
	annotations := live.GetAnnotations()
	_, full := annotations[Annotation]
	_, compact := annotations[CompactAnnotation]
	return full || compact
}

// AnnotationPatch is a JSON merge patch that sets one annotation, guarded by
// resourceVersion when it is not empty.
func AnnotationPatch(key string, value []byte, resourceVersion string) ([]byte, error) {
	metadata := map[string]any{"annotations": map[string]any{key: string(value)}}
	if resourceVersion != "" {
		metadata["resourceVersion"] = resourceVersion
	}
	patch, err := json.Marshal(map[string]any{"metadata": metadata})
	if err != nil {
		return nil, fmt.Errorf("encoding the annotation patch: %w", err)
	}
	return patch, nil
}

// EditRecord returns the patch that replaces live's record with what edit
// makes of it, written back into the annotation it came from (kubectl's
// encoding for the full record, packed for the compact one) and guarded by
// live's resourceVersion. Nothing else of the object changes.
func EditRecord(live *unstructured.Unstructured, edit func(record map[string]any) error) ([]byte, error) {
	key, encoded, err := EditedRecord(live, edit)
	if err != nil {
		return nil, err
	}
	return AnnotationPatch(key, encoded, live.GetResourceVersion())
}

// EditedRecord is EditRecord's annotation and value, for a caller that
// changes more of the object in the same write.
func EditedRecord(live *unstructured.Unstructured, edit func(record map[string]any) error) (key string, value []byte, err error) {
	key, record, err := readRaw(live)
	if err != nil {
		return "", nil, err
	}
	if err := edit(record); err != nil {
		return "", nil, err
	}
	encoded, err := encodeRecord(key, record)
	if err != nil {
		return "", nil, err
	}
	return key, encoded, nil
}

// readRaw returns which annotation holds live's record, and the record.
func readRaw(live *unstructured.Unstructured) (string, map[string]any, error) {
	record, err := Read(live)
	if err != nil {
		return "", nil, err
	}
	if record == nil {
		return "", nil, fmt.Errorf("%w: %s", ErrNoRecord, shown.Text(live.GetName()))
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

// SameAsRecorded reports whether the live value v is the recorded value r,
// numbers compared by value, where r may hold, at any depth, the digest of
// a long string in place of the string (a compact record).
func SameAsRecorded(v, r any) bool {
	switch r := r.(type) {
	case map[string]any:
		m, ok := v.(map[string]any)
		if !ok || len(m) != len(r) {
			return false
		}
		for k, item := range r {
			if live, has := m[k]; !has || !SameAsRecorded(live, item) {
				return false
			}
		}
		return true
	case []any:
		list, ok := v.([]any)
		if !ok || len(list) != len(r) {
			return false
		}
		for i := range r {
			if !SameAsRecorded(list[i], r[i]) {
				return false
			}
		}
		return true
	case string:
		return v == r || digestOf(v) == r
	}
	return fieldpath.Equal(v, r)
}

// LiveStringData is the live value of a Secret's stringData.KEY. The
// server writes each stringData entry base64-encoded under data and keeps
// no stringData, so it is data.KEY decoded. A value that does not decode
// (not what the server writes) is returned as it is: compared, it shows
// as changed.
func LiveStringData(live map[string]any, key string) (any, bool) {
	data, _ := live["data"].(map[string]any)
	encoded, ok := data[key]
	if !ok {
		return nil, false
	}
	s, isString := encoded.(string)
	if !isString {
		return encoded, true
	}
	decoded, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return encoded, true
	}
	return string(decoded), true
}

// Declared is the object as its last-applied record declares it, in the
// live object's namespace; live itself when it has no record (what
// kapply status and release TYPE/NAME compare with, as last applied).
func Declared(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if !HasRecord(live) {
		return live, nil
	}
	record, err := Read(live)
	if err != nil {
		return nil, fmt.Errorf("reading the last-applied record: %w", err)
	}
	declared := &unstructured.Unstructured{Object: record}
	if declared.GetNamespace() == "" {
		declared.SetNamespace(live.GetNamespace())
	}
	return declared, nil
}
