package lastapplied

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/json"
)

// ErrHasRecord reports an object that already carries a last-applied record,
// so it is managed declaratively already and adopt leaves it alone.
var ErrHasRecord = errors.New("the object already has a last-applied record")

// Adopt returns the patch that records file as the last-applied
// configuration of live — an object created imperatively (kubectl create,
// run, expose) — and nothing else. The record is the one kapply apply would
// write for file, so the next apply of the same file compares equal. The
// patch carries live's resourceVersion: a concurrent writer makes it fail
// with a conflict rather than record a file against a state nobody saw.
func Adopt(file, live *unstructured.Unstructured) ([]byte, error) {
	if hasRecord(live) {
		return nil, ErrHasRecord
	}
	withRecord, _, err := AttachWith(file, Recording{Live: live})
	if err != nil {
		return nil, err
	}
	key := Annotation
	record, ok := withRecord.GetAnnotations()[Annotation]
	if !ok {
		key, record = CompactAnnotation, withRecord.GetAnnotations()[CompactAnnotation]
	}
	return AnnotationPatch(key, []byte(record), live.GetResourceVersion())
}

func hasRecord(live *unstructured.Unstructured) bool {
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
