package apply

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/plan"
)

// TestErrorOfNamesObjectAndFile: a failure reads as it did when pkg/load
// formatted it — the object, then the file when there is one — and
// unwraps to its cause.
func TestErrorOfNamesObjectAndFile(t *testing.T) {
	deploy := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "shop"}}}
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": "shop"}}}
	cause := errors.New("boom")
	for _, c := range []struct {
		obj  *unstructured.Unstructured
		src  plan.Source
		want string
	}{
		{deploy, plan.Source{File: "web.yaml", Index: 2, Line: 7}, "deployment.apps/web -n shop (from web.yaml): boom"},
		{deploy, plan.Source{}, "deployment.apps/web -n shop: boom"},
		{ns, plan.Source{File: "STDIN"}, "namespace/shop (from STDIN): boom"},
	} {
		err := ErrorOf(c.obj, c.src, cause)
		if err.Error() != c.want {
			t.Errorf("ErrorOf = %q, want %q", err, c.want)
		}
		var objErr *ObjectError
		if !errors.Is(err, cause) || !errors.As(err, &objErr) || objErr.Source != c.src {
			t.Errorf("%v: does not unwrap to its cause and source", err)
		}
	}
	if ErrorOf(deploy, plan.Source{}, nil) != nil {
		t.Error("ErrorOf of nil is not nil")
	}
}

// TestInputSourcesOnePerObject: Sources are optional, but when given there
// is one per object; anything else is refused, not guessed at.
func TestInputSourcesOnePerObject(t *testing.T) {
	objs := []*unstructured.Unstructured{{Object: map[string]any{}}, {Object: map[string]any{}}}
	got, err := Input{Objects: objs}.objects()
	if err != nil || len(got) != 2 || got[1].Source != (plan.Source{}) || got[1].Obj != objs[1] {
		t.Errorf("no Sources: %v, %v", got, err)
	}
	src := []plan.Source{{File: "a.yaml", Index: 1}, {File: "a.yaml", Index: 2}}
	if got, err := (Input{Objects: objs, Sources: src}).objects(); err != nil || got[1].Source != src[1] {
		t.Errorf("one Source per object: %v, %v", got, err)
	}
	if _, err := (Input{Objects: objs, Sources: src[:1]}).objects(); err == nil {
		t.Error("one Source for two objects was accepted")
	}
	if _, err := (Input{Objects: objs, Errors: []error{errors.New("bad file")}}).readAll(); err == nil {
		t.Error("an ownership operation went on with an Input that has Errors")
	}
}

// TestObjectRefOfNoObject: a program printing every event with ObjectRef
// meets events with no Object (a failed prune step); it panicked.
func TestObjectRefOfNoObject(t *testing.T) {
	if got := ObjectRef(Event{}.Object); got != "" {
		t.Errorf("ObjectRef(nil) = %q", got)
	}
	if got := ObjectName(nil); got != "" {
		t.Errorf("ObjectName(nil) = %q", got)
	}
}
