package apply_test

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/delete"
)

// TestInputNilObjectRefused: an Input holding a nil object is refused by
// every operation, before a request; each one panicked on it.
func TestInputNilObjectRefused(t *testing.T) {
	applier, err := newExampleApplier(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	in := apply.Input{Objects: []*unstructured.Unstructured{nil}}
	ops := map[string]func() error{
		"Apply":          func() error { _, err := applier.Apply(ctx, in, apply.Options{}); return err },
		"Delete":         func() error { _, err := applier.Delete(ctx, in, delete.Options{}); return err },
		"Status":         func() error { _, err := applier.Status(ctx, in, apply.StatusOptions{}); return err },
		"Adopt":          func() error { _, err := applier.Adopt(ctx, in, apply.AdoptOptions{}); return err },
		"Release":        func() error { _, err := applier.Release(ctx, in, apply.ReleaseOptions{}); return err },
		"SetLastApplied": func() error { _, err := applier.SetLastApplied(ctx, in, apply.SetLastAppliedOptions{}); return err },
	}
	for name, op := range ops {
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s of a nil object panicked: %v", name, p)
				}
			}()
			if err := op(); err == nil || !strings.Contains(err.Error(), "Input.Objects[0] is nil") {
				t.Errorf("%s of a nil object: %v, want it refused", name, err)
			}
		}()
	}
}

// TestInputNamespacedObjectWithoutNamespace: Apply and Delete with no
// WriteOptions.Namespace give a namespaced object built without one the
// namespace "default", as the ownership operations and kubectl do; they
// sent it to the cluster-wide URL ("the server does not allow this
// method").
func TestInputNamespacedObjectWithoutNamespace(t *testing.T) {
	applier, err := newExampleApplier(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "input-without-namespace"}, "data": map[string]any{"k": "v"}}}
	events, err := applier.Apply(ctx, apply.Input{Objects: []*unstructured.Unstructured{obj.DeepCopy()}}, apply.Options{})
	if err != nil || len(events) != 1 || events[0].Outcome != apply.Created {
		t.Fatalf("Apply: %v %+v", err, events)
	}
	configMaps := dynamic.NewForConfigOrDie(cluster.Config).Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(metav1.NamespaceDefault)
	if _, err := configMaps.Get(ctx, "input-without-namespace", metav1.GetOptions{}); err != nil {
		t.Fatalf("not created in default: %v", err)
	}
	events, err = applier.Delete(ctx, apply.Input{Objects: []*unstructured.Unstructured{obj.DeepCopy()}}, delete.Options{})
	if err != nil || len(events) != 1 || events[0].Err != nil {
		t.Fatalf("Delete: %v %+v", err, events)
	}
	if _, err := configMaps.Get(ctx, "input-without-namespace", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("not deleted from default: %v", err)
	}
}
