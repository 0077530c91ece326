package apply

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/plan"
)

// Objects built in code have no Source: the error names their places in
// the input instead of an empty file name.
func TestDuplicateErrorNamesInputPlacesWithoutSource(t *testing.T) {
	cm := func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind("ConfigMap")
		u.SetName("a")
		return u
	}
	objects := []*object{{Obj: cm()}, {Obj: cm(), Source: plan.Source{File: "x.yaml"}}, {Obj: cm()}}
	got := duplicateError(objects, []int{0, 2}).Error()
	want := "declared 2 times, in the input (objects 0, 2): none of them is applied"
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if strings.Contains(got, "in  (") {
		t.Fatalf("empty source named: %q", got)
	}
}
