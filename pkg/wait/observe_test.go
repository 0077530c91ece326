package wait

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

// TestObserveTakesTheFirstUIDSeen: a target without a UID is the first
// object the wait sees under its name; one of another UID seen later (a
// re-list after a watch gap hides the deletion between them) means the
// target is deleted.
func TestObserveTakesTheFirstUIDSeen(t *testing.T) {
	mapping := &meta.RESTMapping{GroupVersionKind: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}}
	var reported []Result
	w := &waiter{opts: Options{OnResult: func(_ int, r Result) { reported = append(reported, r) }}, final: Result.Deleted,
		results: []Result{{Target: Target{Mapping: mapping, Name: "cfg"}}}, done: []bool{false}, uids: []types.UID{""}}
	object := func(uid types.UID) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
		u.SetName("cfg")
		u.SetUID(uid)
		return u
	}
	if w.observe([]int{0}, object("first"), false) || len(reported) != 0 {
		t.Fatalf("the first object seen is final: %v", reported)
	}
	if w.uids[0] != "first" {
		t.Fatalf("the target took UID %q, want the first object's", w.uids[0])
	}
	if w.observe([]int{0}, object("first"), false) {
		t.Fatalf("the same object again is final")
	}
	if !w.observe([]int{0}, object("second"), false) || len(reported) != 1 || !reported[0].Deleted() ||
		reported[0].Status != kstatus.NotFoundStatus || reported[0].Target.Name != "cfg" {
		t.Fatalf("an object of another UID: reported %+v, want the target Deleted", reported)
	}
}
