package lastapplied

import (
	"encoding/json"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/kapply/kapply/pkg/merge"
)

// TestRedactedRecordDeletesWhatTheFileDrops: with a redacted record as
// last-applied, the engine and kubectl's three-way strategic merge
// (apimachinery's, which kubectl apply runs) both delete the data key the
// file dropped, keep another writer's key and set the file's values: the
// record's values are not read, only its keys.
func TestRedactedRecordDeletesWhatTheFileDrops(t *testing.T) {
	first := secretFile()
	delete(first.Object, "stringData")
	withRecord, _, err := attachKeyed(first)
	if err != nil {
		t.Fatal(err)
	}
	last := recordMap(t, withRecord)
	live := withRecord.DeepCopy()
	live.Object["data"].(map[string]any)["theirs"] = b64("other-writer")
	file := first.DeepCopy()
	delete(file.Object["data"].(map[string]any), "same")
	file.Object["data"].(map[string]any)["token"] = b64("new-token")
	want := map[string]any{"token": b64("new-token"), "theirs": b64("other-writer")}

	plan, err := merge.ThreeWay(last, file.Object, live.Object, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := plan.Merged["data"]; !reflect.DeepEqual(got, want) {
		t.Errorf("kapply's engine: data %v, want %v", got, want)
	}

	js := func(v any) []byte {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	meta, err := strategicpatch.NewPatchMetaFromStruct(&corev1.Secret{})
	if err != nil {
		t.Fatal(err)
	}
	patch, err := strategicpatch.CreateThreeWayMergePatch(js(last), js(file.Object), js(live.Object), meta, true)
	if err != nil {
		t.Fatal(err)
	}
	patched, err := strategicpatch.StrategicMergePatch(js(live.Object), patch, &corev1.Secret{})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(patched, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got["data"], want) {
		t.Errorf("kubectl's three-way merge: data %v, want %v (patch %s)", got["data"], want, patch)
	}
}
