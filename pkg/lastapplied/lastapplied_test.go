package lastapplied

import (
	"bytes"
	"maps"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// asLoaded gives obj as kapply loads objects: through JSON into the
// unstructured scheme (whole numbers int64, others float64).
func asLoaded(t testing.TB, obj map[string]any) *unstructured.Unstructured {
	t.Helper()
	data, err := (&unstructured.Unstructured{Object: obj}).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := runtime.Decode(unstructured.UnstructuredJSONScheme, data)
	if err != nil {
		t.Fatal(err)
	}
	return decoded.(*unstructured.Unstructured)
}

// TestLastAppliedIsWhatReadDecodes: when live's record is the one just
// attached, LastApplied skips the decode and must give exactly what Read
// decodes — on every object of the real-world corpus, on Secrets recorded
// both ways, and on numbers JSON writes in other forms than YAML.
func TestLastAppliedIsWhatReadDecodes(t *testing.T) {
	var objs []*unstructured.Unstructured
	for _, doc := range []string{
		`{apiVersion: v1, kind: Secret, metadata: {name: s, annotations: {a: b}}, data: {k: dmFsdWU=}, stringData: {p: plain}}`,
		`{apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {x: "<&>\u2028"}}`,
		`{apiVersion: example.com/v1, kind: Thing, metadata: {name: t, labels: {}}, spec: {a: 1.0, b: 1e21, c: 0.1, d: -0, e: 123456789012345678901, f: [1, 2.5, null, {}, []], g: null}}`,
	} {
		obj := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, asLoaded(t, obj))
	}
	if !testing.Short() {
		for _, obj := range readRealWorld(t) {
			objs = append(objs, asLoaded(t, obj.Object))
		}
	}
	same, compacted := 0, 0
	for _, obj := range objs {
		for _, secrets := range []SecretRecord{RedactSecrets, PlainSecrets} {
			a, err := AttachRecord(obj, Recording{Secrets: secrets, Key: testKey})
			if err != nil {
				t.Fatalf("%s: %v", obj.GetName(), err)
			}
			if a.Compacted {
				compacted++
			}
			live := a.Obj.DeepCopy()
			live.SetResourceVersion("7")
			got, err := a.LastApplied(live)
			if err != nil {
				t.Fatalf("%s: %v", obj.GetName(), err)
			}
			want, err := Read(live)
			if err != nil {
				t.Fatalf("%s: %v", obj.GetName(), err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s %s (%s secrets): LastApplied gives\n%v\nRead decodes\n%v", obj.GetKind(), obj.GetName(), secrets, got, want)
			}
			if a.recorded != nil && reflect.ValueOf(got).Pointer() == reflect.ValueOf(a.recorded).Pointer() {
				same++
			}
		}
	}
	if want := 2*len(objs) - compacted; same != want {
		t.Errorf("the decode was skipped for %d objects of %d with a full record", same, want)
	}
	t.Logf("%d objects, %d compacted", len(objs), compacted/2)
}

// TestLastAppliedReadsAnotherRecord: a record that differs from the one
// attached, even by a byte, or a compact one, is read from live.
func TestLastAppliedReadsAnotherRecord(t *testing.T) {
	obj := asLoaded(t, map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "c"},
		"data":     map[string]any{"a": "1", "b": "2"},
	})
	a, err := AttachRecord(obj, Recording{Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	older := asLoaded(t, map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "c"},
		"data":     map[string]any{"a": "1", "b": "2", "gone": "3"},
	})
	previous, err := AttachRecord(older, Recording{Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	for name, live := range map[string]*unstructured.Unstructured{
		"an older record": previous.Obj,
		"no record":       older,
	} {
		got, err := a.LastApplied(live)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Read(live)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: LastApplied gives %v, Read %v", name, got, want)
		}
	}
	got, err := a.LastApplied(previous.Obj)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got["data"].(map[string]any)["gone"]; !ok {
		t.Errorf("the older record's field is not in what LastApplied gives: %v", got)
	}
}

// TestEncodeIsTheUnstructuredSchemes: the record is, byte for byte, what
// the unstructured JSON scheme writes (kubectl's encoder), on the
// real-world corpus as loaded and as YAML decodes it (float64 numbers),
// and on values of other Go types.
func TestEncodeIsTheUnstructuredSchemes(t *testing.T) {
	objs := []*unstructured.Unstructured{{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "typed", "labels": map[string]string{"a": "<b>"}},
		"data":     map[string]any{"n": int(3), "list": []string{"x"}},
	}}}
	if !testing.Short() {
		for _, obj := range readRealWorld(t) {
			objs = append(objs, obj, asLoaded(t, obj.Object))
		}
	}
	for _, obj := range objs {
		got, err := Encode(obj)
		if err != nil {
			t.Fatal(err)
		}
		clean := &unstructured.Unstructured{Object: maps.Clone(obj.Object)}
		clean.Object["metadata"] = maps.Clone(obj.Object["metadata"].(map[string]any))
		annotations := clean.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		delete(annotations, Annotation)
		clean.SetAnnotations(annotations)
		var want bytes.Buffer
		if err := unstructured.UnstructuredJSONScheme.Encode(clean, &want); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%s %s: record\n%s\nthe scheme writes\n%s", obj.GetKind(), obj.GetName(), got, want.Bytes())
		}
	}
}

// TestLastAppliedOfStringsThatAreNotUTF8: a library caller's object may
// hold bytes that are not UTF-8, which the record holds as U+FFFD: the
// record is then decoded, and LastApplied gives what Read gives.
func TestLastAppliedOfStringsThatAreNotUTF8(t *testing.T) {
	for _, data := range []map[string]any{
		{"k": "a\xffb"},
		{"a\xffb": "v"},
		{"k": `the text \ufffd`},
	} {
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "c"},
			"data":     data,
		}}
		a, err := AttachRecord(obj, Recording{Key: testKey})
		if err != nil {
			t.Fatal(err)
		}
		got, err := a.LastApplied(a.Obj)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Read(a.Obj)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("data %q: LastApplied gives %q, Read %q", data, got["data"], want["data"])
		}
	}
}
