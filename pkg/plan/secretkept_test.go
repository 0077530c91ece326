package plan

import (
	"reflect"
	"testing"

	"github.com/kapply/kapply/pkg/fieldpath"
)

// TestWithKeptSecretValues: the kept data keys take live's value (or
// none where live has none), their stringData keys leave; the others and
// the file given stay as they were.
func TestWithKeptSecretValues(t *testing.T) {
	it := Item{ID: ID{Version: "v1", Kind: "Secret", Namespace: "ns", Name: "s"},
		KeptLive: []fieldpath.Path{fieldpath.Fields("data", "a"), fieldpath.Fields("data", "gone"), fieldpath.Fields("spec", "x")}}
	file := map[string]any{"kind": "Secret",
		"data":       map[string]any{"a": "ZmlsZQ==", "gone": "eA=="},
		"stringData": map[string]any{"a": "file", "b": "fileB"}}
	live := map[string]any{"data": map[string]any{"a": "bGl2ZQ=="}}
	got := it.WithKeptSecretValues(file, live)
	want := map[string]any{"kind": "Secret", "data": map[string]any{"a": "bGl2ZQ=="}, "stringData": map[string]any{"b": "fileB"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if file["data"].(map[string]any)["a"] != "ZmlsZQ==" || len(file["stringData"].(map[string]any)) != 2 {
		t.Errorf("the file given was modified: %v", file)
	}
	cm := it
	cm.ID.Kind = "ConfigMap"
	if got := cm.WithKeptSecretValues(file, live); !reflect.DeepEqual(got, file) {
		t.Errorf("a ConfigMap: %v, want the file as it is", got)
	}
}
