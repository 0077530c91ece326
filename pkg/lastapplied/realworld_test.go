package lastapplied

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kapply/kapply/internal/fixture"
)

// TestRealWorldRecordsFit: every object of the real-world corpus gets a
// record the API server accepts; those past the limit (6 CRDs of
// prometheus-operator, argo-cd's applicationsets, external-secrets'
// secretstores and clustersecretstores) a compact one that is exact. The
// log shows the sizes, and those of the elided record, the fallback.
func TestRealWorldRecordsFit(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 9 MB of manifests")
	}
	objs := readRealWorld(t)
	over := 0
	for _, obj := range objs {
		out, compacted, err := attachKeyed(obj)
		if err != nil {
			t.Errorf("%s %s: %v", obj.GetKind(), obj.GetName(), err)
			continue
		}
		if compacted {
			over++
			checkExact(t, obj, out)
		}
	}
	t.Logf("%d objects, %d over the limit", len(objs), over)
}

// checkExact checks that the compact record on out holds obj's full record.
func checkExact(t *testing.T, obj, out *unstructured.Unstructured) {
	t.Helper()
	full, err := Encode(obj)
	if err != nil {
		t.Fatal(err)
	}
	compact := out.GetAnnotations()[CompactAnnotation]
	unpacked, err := unpack(compact, maxUnpacked)
	if err != nil || !bytes.Equal(unpacked, full) {
		t.Errorf("%s: the compact record is not the full one (err %v)", obj.GetName(), err)
	}
	elided, err := elideRecord(full)
	if err != nil {
		t.Fatal(err)
	}
	packedElided, err := pack(elided)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%-42s full %6d bytes, compact %6d (%4.1f%%); elided %6d, elided packed %6d",
		obj.GetName(), len(full), len(compact), 100*float64(len(compact))/float64(len(full)), len(elided), len(packedElided))
}

func readRealWorld(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	realWorld := fixture.RealWorldDir(t)
	files, err := filepath.Glob(filepath.Join(realWorld, "*", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Skipf("no real-world corpus at %s", realWorld)
	}
	var out []*unstructured.Unstructured
	for _, file := range files {
		out = append(out, readManifest(t, file)...)
	}
	return out
}

func readManifest(t testing.TB, file string) []*unstructured.Unstructured {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []*unstructured.Unstructured
	dec := yaml.NewYAMLOrJSONDecoder(f, 64*1024)
	for {
		obj := map[string]any{}
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("reading %s: %v", file, err)
		}
		if len(obj) > 0 {
			out = append(out, &unstructured.Unstructured{Object: obj})
		}
	}
}

// BenchmarkAttachRealCRD: the cost of the compact record of the largest
// real CRD (prometheus-operator's Prometheus, a 485 KB record) per apply.
func BenchmarkAttachRealCRD(b *testing.B) {
	file := filepath.Join(fixture.RealWorldDir(b), "prometheus-operator", "monitoring.coreos.com_prometheuses.yaml")
	if _, err := os.Stat(file); err != nil {
		b.Skipf("no real-world corpus: %v", err)
	}
	objs := readManifest(b, file)
	for b.Loop() {
		if _, _, err := attachKeyed(objs[0]); err != nil {
			b.Fatal(err)
		}
	}
}
