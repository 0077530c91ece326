package ownership

import (
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	kpath "github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/lastapplied"
)

const containerWeb = `"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{},"f:resources":{".":{},"f:limits":{".":{},"f:cpu":{}}}}}}}}`

// TestReleaseTakesFieldsOutOfClientSideEntries: the release patch carries
// the record without the fields, live's resourceVersion, and managedFields
// in which client-side apply's Update entries no longer own the fields or
// anything under them; another manager's entry (an autoscaler's, the
// scale subresource's) keeps what it owns.
func TestReleaseTakesFieldsOutOfClientSideEntries(t *testing.T) {
	record := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"web","image":"nginx","resources":{"limits":{"cpu":"1"}}}]}}}}`
	live := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "resourceVersion": "42", "annotations": map[string]any{lastapplied.Annotation: record}}}}
	live.SetManagedFields([]metav1.ManagedFieldsEntry{
		entry("kubectl-client-side-apply", metav1.ManagedFieldsOperationUpdate, "", `{`+recordLA+`,`+containerWeb[:len(`"f:spec":{`)]+`"f:replicas":{},`+containerWeb[len(`"f:spec":{`):]+`}`),
		entry("hpa", metav1.ManagedFieldsOperationUpdate, "", `{"f:spec":{"f:replicas":{}}}`),
		entry("kubectl-client-side-apply", metav1.ManagedFieldsOperationUpdate, "scale", `{"f:spec":{"f:replicas":{}}}`),
	})
	paths := []kpath.Path{mustParse(t, "spec.replicas"), mustParse(t, "spec.template.spec.containers[name=web].resources")}

	patch, err := Release(live, paths, sets.New("kubectl-client-side-apply"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Metadata struct {
			ResourceVersion string                      `json:"resourceVersion"`
			Annotations     map[string]string           `json:"annotations"`
			ManagedFields   []metav1.ManagedFieldsEntry `json:"managedFields"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(patch, &got); err != nil {
		t.Fatal(err)
	}
	if got.Metadata.ResourceVersion != "42" {
		t.Errorf("resourceVersion %q, want live's 42", got.Metadata.ResourceVersion)
	}
	if want := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"name":"web"},"spec":{"template":{"spec":{"containers":[{"image":"nginx","name":"web"}]}}}}` + "\n"; got.Metadata.Annotations[lastapplied.Annotation] != want {
		t.Errorf("record %s, want %s", got.Metadata.Annotations[lastapplied.Annotation], want)
	}
	if len(got.Metadata.ManagedFields) != 3 {
		t.Fatalf("%d entries, want 3: %+v", len(got.Metadata.ManagedFields), got.Metadata.ManagedFields)
	}
	want := `{"f:metadata":{"f:annotations":{"f:kubectl.kubernetes.io/last-applied-configuration":{}}},"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{}}}}}}}`
	if got := string(got.Metadata.ManagedFields[0].FieldsV1.Raw); got != want {
		t.Errorf("kubectl-client-side-apply owns %s,\nwant %s", got, want)
	}
	for _, e := range got.Metadata.ManagedFields[1:] {
		if owned := string(e.FieldsV1.Raw); owned != `{"f:spec":{"f:replicas":{}}}` {
			t.Errorf("%s owns %s, want its replicas kept", managerName(e), owned)
		}
	}
}

// TestOnlyRecordKeepsTheRecordsFields: client-side apply's entries keep
// what the record names, the maps and elements holding it, and the
// record's annotation; a released spec.replicas and a default go to no one.
func TestOnlyRecordKeepsTheRecordsFields(t *testing.T) {
	entries := []metav1.ManagedFieldsEntry{
		entry("kubectl-client-side-apply", metav1.ManagedFieldsOperationUpdate, "",
			`{`+recordLA+`,"f:spec":{"f:progressDeadlineSeconds":{},"f:replicas":{},"f:template":{"f:metadata":{"f:labels":{".":{},"f:app":{}}}}}}`),
		entry("hpa", metav1.ManagedFieldsOperationUpdate, "", `{"f:spec":{"f:replicas":{}}}`),
	}
	record := fieldpath.NewSet(fieldpath.MakePathOrDie("spec", "template", "metadata", "labels", "app"))
	out, changed, err := OnlyRecord(entries, sets.New("kubectl-client-side-apply"), record)
	if err != nil || !changed {
		t.Fatalf("OnlyRecord: changed %v, %v", changed, err)
	}
	if got, want := fieldsOf(t, out, "kubectl-client-side-apply", metav1.ManagedFieldsOperationUpdate),
		`{`+recordLA+`,"f:spec":{"f:template":{"f:metadata":{"f:labels":{".":{},"f:app":{}}}}}}`; got != want {
		t.Errorf("kubectl-client-side-apply owns %s,\nwant %s", got, want)
	}
	if got := fieldsOf(t, out, "hpa", metav1.ManagedFieldsOperationUpdate); got != `{"f:spec":{"f:replicas":{}}}` {
		t.Errorf("hpa owns %s, want its replicas kept", got)
	}
	if _, changed, _ := OnlyRecord(out, sets.New("kubectl-client-side-apply"), record); changed {
		t.Errorf("OnlyRecord twice changed something")
	}
}

func mustParse(t *testing.T, s string) kpath.Path {
	t.Helper()
	p, err := kpath.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
