package apply_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/apply/prune"
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

// TestExecuteChecksPlansBuiltInCode: a plan built in code (not decoded)
// gets the checks a decoded one gets. A prune item without the live
// object's UID deleted whatever object bears the name now, without the
// precondition a plan promises; an item whose object names another
// namespace, and an object planned twice, ran too. Each is refused, and
// the live object is left.
func TestExecuteChecksPlansBuiltInCode(t *testing.T) {
	w := newPlanWorld(t, "codeplan")
	w.mustApply(w.configMap("live", map[string]any{"k": "v"}))
	cluster := w.plan(w.configMap("live", map[string]any{"k": "v"})).Cluster
	live := plan.ID{Version: "v1", Kind: "ConfigMap", Namespace: w.ns, Name: "live"}
	other := plan.ID{Version: "v1", Kind: "ConfigMap", Namespace: w.ns, Name: "other"}
	object := func(ns string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "other", "namespace": ns}}
	}
	for name, items := range map[string][]plan.Item{
		"prune without UID":       {{Action: plan.Prune, ID: live}},
		"object of another space": {{Action: plan.Create, ID: other, Merged: object("kube-system")}},
		"object twice":            {{Action: plan.Create, ID: other, Merged: object(w.ns)}, {Action: plan.Create, ID: other, Merged: object(w.ns)}},
	} {
		events, err := w.applier.Execute(context.Background(), &plan.Plan{Cluster: cluster, Items: items}, apply.ExecuteOptions{})
		if !errors.Is(err, plan.ErrInvalid) || len(events) != 0 {
			t.Errorf("%s: %v, %d events; want the plan refused as invalid", name, err, len(events))
		}
		if w.read(configMaps, "live") == nil {
			t.Fatalf("%s: the live object was deleted", name)
		}
	}
}

// TestPruneWithNoScopeIsRefused: Prune (and Apply with Prune set) given
// prune.Options with neither Selector nor ApplySet — a zero value — pruned
// every object of the allowlisted kinds in the namespace that the input did
// not declare (kubectl refuses this without --all). It is refused, nothing
// deleted, unless All says so.
func TestPruneWithNoScopeIsRefused(t *testing.T) {
	w := newPlanWorld(t, "noscope")
	ctx := context.Background()
	keep := w.configMap("keep", map[string]any{"k": "v"})
	w.mustApply(keep, w.configMap("bystander", map[string]any{"k": "v"}))
	in := func() apply.Input { return apply.Input{Objects: []*unstructured.Unstructured{keep.DeepCopy()}} }
	events, err := w.applier.Prune(ctx, in(), apply.PruneOptions{Namespace: w.ns})
	var pruneErr *apply.PruneError
	if !errors.As(err, &pruneErr) || len(events) != 0 || !strings.Contains(err.Error(), "prune.Options.All") {
		t.Errorf("prune with zero options: %v, %d events; want a PruneError naming All", err, len(events))
	}
	events, _ = w.applier.Apply(ctx, in(), apply.Options{Prune: &prune.Options{}})
	for _, ev := range events {
		if ev.Outcome == apply.Pruned {
			t.Errorf("apply with zero prune options pruned %s", apply.ObjectRef(ev.Object))
		}
	}
	w.read(configMaps, "bystander") // fails the test when it is gone
	events, err = w.applier.Prune(ctx, in(), apply.PruneOptions{Namespace: w.ns, Options: prune.Options{All: true}})
	if err != nil || len(events) != 1 || events[0].Outcome != apply.Pruned {
		t.Errorf("prune with All: %v, %v; want the bystander pruned", err, events)
	}
}

// TestWaitEndsItsGoroutines: a long-lived Applier's Wait on an object
// that never becomes ready, ended by its context (deadline or cancel),
// leaves no goroutine behind. apimachinery's watch.Filter, which the wait
// used, left one per wait blocked on an event nobody read (12 after 40
// waits), each holding the object.
func TestWaitEndsItsGoroutines(t *testing.T) {
	w := newPlanWorld(t, "waitleak")
	dep := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "never", "namespace": w.ns},
		"spec": map[string]any{"replicas": int64(1), "selector": map[string]any{"matchLabels": map[string]any{"a": "b"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": "b"}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nope"}}}}}}}
	events, err := w.applier.Apply(context.Background(), apply.Input{Objects: []*unstructured.Unstructured{dep}}, apply.Options{})
	if err != nil || events[0].Err != nil {
		t.Fatal(err, events[0].Err)
	}
	for i := 0; i < 20; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(100+10*i)*time.Millisecond)
		if _, err := w.applier.Wait(ctx, events, apply.WaitOptions{}); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("wait %d: %v, want the deadline", i, err)
		}
		cancel()
		ctx, cancel = context.WithCancel(context.Background())
		time.AfterFunc(time.Duration(10*i)*time.Millisecond, cancel)
		if _, err := w.applier.Wait(ctx, events, apply.WaitOptions{}); !errors.Is(err, context.Canceled) {
			t.Fatalf("wait %d: %v, want the cancel", i, err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		stacks := make([]byte, 1<<22)
		stacks = stacks[:runtime.Stack(stacks, true)]
		left := regexp.MustCompile(`(?m)^k8s\.io/apimachinery/pkg/watch\.\(\*filteredWatch\)|^github\.com/kapply/kapply/pkg/wait\.`).FindAll(stacks, -1)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines of the waits are left:\n%s", len(left), stacks)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestDeleteOfSecretNamedOnlyMasksLiveValues: a program deleting a Secret
// by name (an object with no data: the values are known only live) gets
// the policy's denial, which quotes the live value, masked.
func TestDeleteOfSecretNamedOnlyMasksLiveValues(t *testing.T) {
	w := newPlanWorld(t, "namedonly")
	installQuotingPolicies(t, w.ns)
	w.mustApply(w.secret("kept", "nodelete", keptValue))
	named := w.secret("kept", "nodelete", "")
	unstructured.RemoveNestedField(named.Object, "data")
	for _, propagation := range []string{"", "Foreground", "Orphan"} {
		events, err := w.applier.Delete(context.Background(), apply.Input{Objects: []*unstructured.Unstructured{named}},
			deleteOptions(propagation))
		noLeak(t, "delete by name "+propagation, err, events...)
		var objErr *apply.ObjectError
		if len(events) != 1 || !errors.As(events[0].Err, &objErr) {
			t.Fatalf("delete by name %s: %v %v, want the denial", propagation, err, events)
		}
		noLeak(t, "delete by name, ObjectError", objErr)
		wantMasked(t, "delete by name "+propagation, events[0])
	}
}

func deleteOptions(propagation string) delete.Options {
	return delete.Options{Cascade: metav1.DeletionPropagation(propagation)}
}
