package apply

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// otherVersionOwners names, per version, the managers of the main
// resource recorded in another version than the file's; a status entry
// in another version, which an apply to the main resource never touches,
// and entries in the file's version are not warned of.
func TestOtherVersionOwners(t *testing.T) {
	file := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
		"metadata": map[string]any{"name": "web", "namespace": "app"}}}
	live := file.DeepCopy()
	live.SetManagedFields([]metav1.ManagedFieldsEntry{
		{Manager: "kubectl-client-side-apply", APIVersion: "autoscaling/v1", Operation: metav1.ManagedFieldsOperationUpdate},
		{Manager: "kubectl-edit", APIVersion: "autoscaling/v1", Operation: metav1.ManagedFieldsOperationUpdate},
		{Manager: "old", APIVersion: "autoscaling/v2beta2", Operation: metav1.ManagedFieldsOperationUpdate},
		{Manager: "kube-controller-manager", APIVersion: "autoscaling/v1", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status"},
		{Manager: "kubectl", APIVersion: "autoscaling/v2", Operation: metav1.ManagedFieldsOperationApply},
	})
	got := otherVersionOwners(&object{Obj: file}, live, file.GroupVersionKind())
	want := []string{
		`the fields of "kubectl-client-side-apply", "kubectl-edit" are recorded in autoscaling/v1, which the server converts to autoscaling/v2`,
		`the fields of "old" are recorded in autoscaling/v2beta2, which the server converts to autoscaling/v2`,
	}
	if len(got) != len(want) {
		t.Fatalf("got %d warnings, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], "horizontalpodautoscaler.autoscaling/web -n app: ") || !strings.Contains(got[i], want[i]) {
			t.Errorf("warning %d = %q, want one naming the object and %q", i, got[i], want[i])
		}
	}
	if got := otherVersionOwners(&object{Obj: file}, nil, file.GroupVersionKind()); got != nil {
		t.Errorf("no live object: %q", got)
	}
}
