package history

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// BenchmarkRevisionOfAThousandObjects is the local work of recording a
// revision of 1000 ConfigMaps: scrub and sort, compare with the revision
// before (read back from its chunks), encode.
func BenchmarkRevisionOfAThousandObjects(b *testing.B) {
	objs := make([]*unstructured.Unstructured, 1000)
	for i := range objs {
		objs[i] = &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": fmt.Sprintf("cm%04d", i), "namespace": "ns", "labels": map[string]any{"applyset.kubernetes.io/part-of": "applyset-x-v1"}},
			"data":     map[string]any{"v": "1", "i": fmt.Sprint(i)}}}
	}
	before, err := Encode(Revision{Number: 1, Time: time.Now(), Members: NewMembers(objs)}, testParent, MaxChunk)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		members := NewMembers(objs)
		prev, err := Members(items(before), 1)
		if err != nil {
			b.Fatal(err)
		}
		rev := Revision{Number: 2, Time: time.Now(), Counts: Compare(prev, members), Members: members}
		if _, err := Encode(rev, testParent, MaxChunk); err != nil {
			b.Fatal(err)
		}
	}
}
