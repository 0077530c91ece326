package lastapplied

import (
	"slices"
	"testing"

	"github.com/kapply/kapply/pkg/fieldpath"
)

// fieldpath keeps the one list of bookkeeping fields, records included;
// it cannot import this package, so the names are checked here.
func TestRecordAnnotationsAgreeWithFieldpath(t *testing.T) {
	if !slices.Equal(fieldpath.RecordAnnotations, []string{Annotation, CompactAnnotation}) {
		t.Errorf("fieldpath.RecordAnnotations = %v, want %s and %s", fieldpath.RecordAnnotations, Annotation, CompactAnnotation)
	}
}
