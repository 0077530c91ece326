package apply_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/delete"
	"github.com/kapply/kapply/pkg/plan"
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

// TestGoTypedObjectsAreRefusedNotPanicked: an object built in code with a
// plain Go int ("replicas": 3, not int64) — the commonest slip of a
// program that builds unstructured objects — is refused by every
// operation with an error naming the field; it panicked in a worker
// goroutine, killing the caller's process.
func TestGoTypedObjectsAreRefusedNotPanicked(t *testing.T) {
	w := newPlanWorld(t, "gotyped")
	ctx := context.Background()
	obj := func() *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "d", "namespace": w.ns}, "spec": map[string]any{"replicas": 3}}}
	}
	in := func() apply.Input { return apply.Input{Objects: []*unstructured.Unstructured{obj()}} }
	ops := map[string]func() error{
		"apply": func() error { _, err := w.applier.Apply(ctx, in(), apply.Options{}); return err },
		"server-side apply": func() error {
			_, err := w.applier.Apply(ctx, in(), apply.Options{Write: apply.WriteOptions{ServerSide: true}})
			return err
		},
		"plan":             func() error { _, err := w.applier.Plan(ctx, in(), apply.PlanOptions{}); return err },
		"delete":           func() error { _, err := w.applier.Delete(ctx, in(), delete.Options{}); return err },
		"prune":            func() error { _, err := w.applier.Prune(ctx, in(), apply.PruneOptions{Namespace: w.ns}); return err },
		"status":           func() error { _, err := w.applier.Status(ctx, in(), apply.StatusOptions{}); return err },
		"adopt":            func() error { _, err := w.applier.Adopt(ctx, in(), apply.AdoptOptions{}); return err },
		"release":          func() error { _, err := w.applier.Release(ctx, in(), apply.ReleaseOptions{}); return err },
		"set-last-applied": func() error { _, err := w.applier.SetLastApplied(ctx, in(), apply.SetLastAppliedOptions{}); return err },
		"migrate":          func() error { _, err := w.applier.Migrate(ctx, in(), apply.MigrateOptions{}); return err },
		"edit-last-applied": func() error {
			return w.applier.EditLastApplied(ctx, obj(), plan.Source{}, func(b []byte) ([]byte, error) { return b, nil }, apply.EditLastAppliedOptions{}).Err
		},
	}
	for name, op := range ops {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("panicked: %v", p)
				}
			}()
			if err := op(); err == nil || !strings.Contains(err.Error(), "int at .spec.replicas") {
				t.Errorf("err %v, want the Go int at .spec.replicas refused", err)
			}
		})
	}
}
