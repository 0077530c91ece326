package lastapplied

import (
	"bytes"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/json"
)

// Annotation is the key kubectl stores the last-applied configuration under.
const Annotation = corev1.LastAppliedConfigAnnotation

// Encode returns the last-applied record for a file's object: the object
// without the annotation, encoded as kubectl encodes it (the unstructured JSON
// scheme: keys sorted, a trailing newline). obj is not modified.
//
// kubectl does this in k8s.io/kubectl/pkg/util.GetModifiedConfiguration;
// that module may not enter ours (it drags in half of kubectl), so the few
// lines are repeated here and a test compares the bytes with kubectl's.
func Encode(obj *unstructured.Unstructured) ([]byte, error) {
	clean := obj.DeepCopy()
	annotations := clean.GetAnnotations()
	// kubectl records an empty annotations map when the file has none.
	if annotations == nil {
		annotations = map[string]string{}
	}
	delete(annotations, Annotation)
	clean.SetAnnotations(annotations)
	var buf bytes.Buffer
	if err := unstructured.UnstructuredJSONScheme.Encode(clean, &buf); err != nil {
		return nil, fmt.Errorf("encoding last-applied configuration: %w", err)
	}
	return buf.Bytes(), nil
}

// WithRecord returns a copy of obj carrying record as its last-applied
// annotation: what kubectl sends when it creates or patches an object.
func WithRecord(obj *unstructured.Unstructured, record []byte) *unstructured.Unstructured {
	out := obj.DeepCopy()
	annotations := out.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[Annotation] = string(record)
	out.SetAnnotations(annotations)
	return out
}

// Read returns the last-applied configuration recorded on a live object —
// kubectl's record, or else kapply's compact one — or nil when it has none.
// A record that is not a JSON object is an error wrapping ErrMalformed:
// callers warn and treat it as absent, never delete fields on a guess.
func Read(live *unstructured.Unstructured) (map[string]any, error) {
	annotations := live.GetAnnotations()
	raw, ok := annotations[Annotation]
	if !ok {
		raw, ok = annotations[CompactAnnotation]
	}
	if !ok {
		return nil, nil
	}
	// apimachinery's json keeps whole numbers int64, as unstructured objects do.
	obj := map[string]any{}
	if err := json.Unmarshal([]byte(raw), &obj); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return obj, nil
}
