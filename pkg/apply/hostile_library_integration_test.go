package apply_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/apply"
)

// TestObjectErrorUnwrappedIsMasked: a program that takes an event's error
// apart with errors.As to the library's own *apply.ObjectError (to read
// the object's Ref and Source) and prints it, or its Err, prints no Secret
// value — on the real API server, a policy denying a Secret quotes its
// value.
func TestObjectErrorUnwrappedIsMasked(t *testing.T) {
	w := newPlanWorld(t, "objerrmask")
	installQuotingPolicies(t, w.ns)
	denied := w.secret("denied", "policy", deniedValue)
	for _, serverSide := range []bool{false, true} {
		events, _ := w.applier.Apply(context.Background(), apply.Input{Objects: []*unstructured.Unstructured{denied.DeepCopy()}},
			apply.Options{Write: apply.WriteOptions{ServerSide: serverSide}})
		if len(events) != 1 || events[0].Err == nil {
			t.Fatalf("server-side %v: %v, want the denial", serverSide, events)
		}
		var objErr *apply.ObjectError
		if !errors.As(events[0].Err, &objErr) {
			t.Fatalf("server-side %v: %T is no ObjectError", serverSide, events[0].Err)
		}
		noLeak(t, fmt.Sprintf("server-side %v, ObjectError", serverSide), objErr)
		noLeak(t, fmt.Sprintf("server-side %v, ObjectError.Err", serverSide), objErr.Err)
		if objErr.Ref != "secret/denied -n "+w.ns {
			t.Errorf("Ref %q", objErr.Ref)
		}
	}
}
