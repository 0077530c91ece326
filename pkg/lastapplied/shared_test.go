package lastapplied

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
)

// TestSharedAttachIsTheCopyAndLeavesTheFileAlone: on every object of the
// real-world corpus (Secrets recorded plain: a redacted record has a new
// salt on each attach), the object AttachRecord
// gives with Recording.Shared is equal to the deep copy it gives without,
// and writing its annotations (as DropStale does) changes neither the file
// nor the record it encodes.
func TestSharedAttachIsTheCopyAndLeavesTheFileAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 9 MB of manifests")
	}
	for _, obj := range readRealWorld(t) {
		before := obj.DeepCopy()
		copied, err := AttachRecord(obj, Recording{Secrets: PlainSecrets})
		if err != nil {
			t.Fatalf("%s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
		shared, err := AttachRecord(obj, Recording{Secrets: PlainSecrets, Shared: true})
		if err != nil {
			t.Fatalf("%s %s (shared): %v", obj.GetKind(), obj.GetName(), err)
		}
		if copied.Compacted != shared.Compacted || string(copied.record) != string(shared.record) {
			t.Errorf("%s %s: the shared attach recorded something else", obj.GetKind(), obj.GetName())
		}
		if !equality.Semantic.DeepEqual(copied.Obj.Object, shared.Obj.Object) {
			t.Errorf("%s %s: the shared object differs from the copy", obj.GetKind(), obj.GetName())
		}
		annotations, ok := shared.Obj.Object["metadata"].(map[string]any)["annotations"].(map[string]any)
		if !ok {
			t.Fatalf("%s %s: the shared object has no annotations", obj.GetKind(), obj.GetName())
		}
		annotations[Annotation] = nil
		annotations["written-by-the-test"] = "x"
		if !equality.Semantic.DeepEqual(before.Object, obj.Object) {
			t.Fatalf("%s %s: writing the shared object's annotations changed the file", obj.GetKind(), obj.GetName())
		}
	}
}
