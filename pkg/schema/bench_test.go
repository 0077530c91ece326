package schema

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func BenchmarkParseOpenAPIV3CoreV1(b *testing.B) {
	data := readRealDoc(b, "")
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := ParseOpenAPIV3(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseAndBuildPod is the cost of a first Pod in a run.
func BenchmarkParseAndBuildPod(b *testing.B) {
	data := readRealDoc(b, "")
	for b.Loop() {
		doc, err := ParseOpenAPIV3(data)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := doc.Kind(gvk("", "v1", "Pod")); err != nil {
			b.Fatal(err)
		}
	}
}

// rawSource serves the real core/v1 document.
type rawSource []byte

func (s rawSource) OpenAPIV3(schema.GroupVersion) ([]byte, error) { return s, nil }

// BenchmarkResolverMemo measures a Kind call after the first: a map lookup.
func BenchmarkResolverMemo(b *testing.B) {
	r := NewResolver(ResolverConfig{Source: rawSource(readRealDoc(b, "")), IsBuiltin: func(schema.GroupVersionKind) bool { return true }})
	pod := gvk("", "v1", "Pod")
	if _, err := r.Kind(pod); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := r.Kind(pod); err != nil {
			b.Fatal(err)
		}
	}
}
