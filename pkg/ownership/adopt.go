package ownership

import (
	"errors"

	"github.com/kapply/kapply/pkg/lastapplied"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
func Adopt(file, live *unstructured.Unstructured, k lastapplied.DigestKey) ([]byte, error) {
	if lastapplied.HasRecord(live) {
		return nil, ErrHasRecord
	}
	withRecord, _, err := lastapplied.AttachWith(file, lastapplied.Recording{Live: live, Key: k})
	if err != nil {
		return nil, err
	}
	key := lastapplied.Annotation
	record, ok := withRecord.GetAnnotations()[lastapplied.Annotation]
	if !ok {
		key, record = lastapplied.CompactAnnotation, withRecord.GetAnnotations()[lastapplied.CompactAnnotation]
	}
	return lastapplied.AnnotationPatch(key, []byte(record), live.GetResourceVersion())
}
