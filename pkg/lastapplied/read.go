package lastapplied

import (
	"encoding/json"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/kapply/kapply/pkg/secretmask"
	"github.com/kapply/kapply/pkg/shown"
)

// Read returns the last-applied configuration recorded on a live object —
// kubectl's record, or else kapply's compact one — or nil when it has none.
// kubectl's record when it is not a JSON object is an error wrapping
// ErrMalformed (kubectl apply refuses the object); an empty one or null is
// none, as for kubectl. A compact record that cannot be read, or holds more
// than the object could have recorded, is an error wrapping
// ErrCompactCorrupt: callers warn and treat it as absent, never delete
// fields on a guess.
func Read(live *unstructured.Unstructured) (map[string]any, error) {
	annotations := live.GetAnnotations()
	if raw, ok := annotations[Annotation]; ok {
		return readKubectlRecord(raw, live)
	}
	if raw, ok := annotations[CompactAnnotation]; ok {
		return readCompact(raw, live)
	}
	return nil, nil
}

// readKubectlRecord decodes kubectl's record of live as kubectl apply does
// (strategicpatch.CreateThreeWayMergePatch): empty is no record.
func readKubectlRecord(raw string, live *unstructured.Unstructured) (map[string]any, error) {
	if raw == "" {
		return nil, nil
	}
	record, err := decodeObject([]byte(raw))
	if err != nil {
		return nil, decodeError(ErrMalformed, err, []byte(raw), live)
	}
	return record, nil
}

// decodeObject decodes a record as kubectl does (apimachinery's json:
// whole numbers int64, as unstructured objects keep them); JSON null is
// no record, anything but an object an error.
func decodeObject(data []byte) (map[string]any, error) {
	var record map[string]any
	if err := utiljson.Unmarshal(data, &record); err != nil {
		return nil, err
	}
	return record, nil
}

// decodeError is the decoder's refusal err of live's record, wrapped in
// kind. The decoder's text may quote the record — a number out of range
// whole, a character of a string — so for a Secret, whose record may hold
// its values, only where decoding stopped is told.
func decodeError(kind, err error, data []byte, live *unstructured.Unstructured) error {
	if !secretmask.IsSecret(live.Object) {
		return fmt.Errorf("%w: %w", kind, err)
	}
	if offset, ok := errorOffset(data); ok {
		return fmt.Errorf("%w: the JSON is invalid at offset %d (not quoted: a Secret's record may hold its values)", kind, offset)
	}
	return fmt.Errorf("%w: the JSON is invalid (not quoted: a Secret's record may hold its values)", kind)
}

// errorOffset is where encoding/json stops decoding data: the offset its
// syntax or type error gives (apimachinery's decoder, a copy of it, keeps
// its error types internal). Run only on data already refused.
func errorOffset(data []byte) (int64, bool) {
	var v any
	err := json.Unmarshal(data, &v)
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return syntax.Offset, true
	case errors.As(err, &typ):
		return typ.Offset, true
	}
	return 0, false
}

// readCompact decodes raw, the compact record of live, within live's bound.
func readCompact(raw string, live *unstructured.Unstructured) (record map[string]any, err error) {
	err = withCompactJSON(raw, live, func(data []byte) error {
		var err error
		switch record, err = decodeObject(data); {
		case err != nil:
			return decodeError(ErrCompactCorrupt, err, data, live)
		case record == nil:
			return fmt.Errorf("%w: it is null", ErrCompactCorrupt)
		}
		return nil
	})
	return record, err
}

// ShadowedCompact returns the compact record live carries beside kubectl's
// record, nil when it does not carry both. Read takes kubectl's: kubectl
// apply, which knows nothing of the compact record, neither reads nor
// removes it, so kubectl's record is the later one — written by a kubectl
// apply after kapply compacted the record (of a file that fits the limit
// again). The next apply drops the compact record; what it alone held is
// then no longer removed when the file drops it.
func ShadowedCompact(live *unstructured.Unstructured) (map[string]any, error) {
	annotations := live.GetAnnotations()
	raw, compact := annotations[CompactAnnotation]
	if _, full := annotations[Annotation]; !full || !compact {
		return nil, nil
	}
	return readCompact(raw, live)
}

// rawRecord is the JSON of live's record, kubectl's record first, a compact
// one unpacked within its bound.
func rawRecord(live *unstructured.Unstructured) ([]byte, error) {
	annotations := live.GetAnnotations()
	if raw, ok := annotations[Annotation]; ok {
		return []byte(raw), nil
	}
	raw, ok := annotations[CompactAnnotation]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNoRecord, shown.Text(live.GetName()))
	}
	var record []byte
	err := withCompactJSON(raw, live, func(data []byte) error {
		record = data
		return nil
	})
	return record, err
}
