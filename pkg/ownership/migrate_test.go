package ownership

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/yaml"

	"github.com/kapply/kapply/pkg/lastapplied"
)

func entry(manager string, op metav1.ManagedFieldsOperationType, subresource, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, Subresource: subresource, APIVersion: "apps/v1",
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}
}

func fieldsOf(t *testing.T, entries []metav1.ManagedFieldsEntry, manager string, op metav1.ManagedFieldsOperationType) string {
	t.Helper()
	for _, e := range entries {
		if e.Manager == manager && e.Operation == op {
			return string(e.FieldsV1.Raw)
		}
	}
	return ""
}

const (
	recordLA = `"f:metadata":{"f:annotations":{"f:kubectl.kubernetes.io/last-applied-configuration":{}}}`
	labels   = `"f:metadata":{"f:labels":{"f:app":{},"f:tier":{}}}`
)

// TestToServerSideHandsTheRecordsFields: client-side apply's entry goes
// over whole (csaupgrade); kubectl-create keeps what the record does not
// name (spec.strategy, defaulted); kubectl scale keeps the replicas unless
// taken; the record's annotation goes with DropRecord.
func TestToServerSideHandsTheRecordsFields(t *testing.T) {
	entries := []metav1.ManagedFieldsEntry{
		entry("kubectl-create", metav1.ManagedFieldsOperationUpdate, "", `{`+labels+`,"f:spec":{"f:strategy":{}}}`),
		entry("kubectl-client-side-apply", metav1.ManagedFieldsOperationUpdate, "", `{`+recordLA+`}`),
		entry("kubectl", metav1.ManagedFieldsOperationUpdate, "scale", `{"f:spec":{"f:replicas":{}}}`),
	}
	record := fieldpath.NewSet(fieldpath.MakePathOrDie("metadata", "labels", "app"), fieldpath.MakePathOrDie("metadata", "labels", "tier"),
		fieldpath.MakePathOrDie("spec", "replicas"))
	m := ServerSideMigration{Record: record, ClientSide: sets.New("kubectl-client-side-apply"), Imperative: sets.New(ImperativeManagers...), To: "kubectl"}

	out, err := ToServerSide(entries, m)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fieldsOf(t, out, "kubectl", metav1.ManagedFieldsOperationApply), `{`+`"f:metadata":{"f:annotations":{"f:kubectl.kubernetes.io/last-applied-configuration":{}},"f:labels":{"f:app":{},"f:tier":{}}}}`; got != want {
		t.Errorf("kubectl owns %s, want %s", got, want)
	}
	if got := fieldsOf(t, out, "kubectl-create", metav1.ManagedFieldsOperationUpdate); got != `{"f:spec":{"f:strategy":{}}}` {
		t.Errorf("kubectl-create keeps %s, want only spec.strategy", got)
	}
	if got := fieldsOf(t, out, "kubectl", metav1.ManagedFieldsOperationUpdate); got != `{"f:spec":{"f:replicas":{}}}` {
		t.Errorf("kubectl scale keeps %s, want spec.replicas", got)
	}

	m.Take, m.DropRecord = fieldpath.NewSet(fieldpath.MakePathOrDie("spec", "replicas")), true
	if out, err = ToServerSide(entries, m); err != nil {
		t.Fatal(err)
	}
	if got := fieldsOf(t, out, "kubectl", metav1.ManagedFieldsOperationApply); got != `{`+labels+`,"f:spec":{"f:replicas":{}}}` {
		t.Errorf("with Take and DropRecord kubectl owns %s", got)
	}
	if got := fieldsOf(t, out, "kubectl", metav1.ManagedFieldsOperationUpdate); got != "" {
		t.Errorf("kubectl scale keeps %s after Take", got)
	}
}

// TestToClientSideRecordsTheAppliedFields: the server-side manager's fields
// go to client-side apply, and the record written from them holds the
// applied values only (not the controller's, not status).
func TestToClientSideRecordsTheAppliedFields(t *testing.T) {
	var live unstructured.Unstructured
	if err := yaml.Unmarshal([]byte(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: ns
  labels: {app: web, added-by-hand: "1"}
  annotations: {kubectl.kubernetes.io/last-applied-configuration: "{}"}
spec:
  replicas: 3
  template:
    spec:
      containers:
      - {name: web, image: nginx, imagePullPolicy: Always}
      - {name: sidecar, image: envoy}
status: {replicas: 3}
`), &live.Object); err != nil {
		t.Fatal(err)
	}
	entries := []metav1.ManagedFieldsEntry{
		entry("kubectl", metav1.ManagedFieldsOperationApply, "", `{"f:metadata":{"f:labels":{"f:app":{}},`+recordLA[len(`"f:metadata":{`):len(recordLA)-1]+`},"f:spec":{"f:replicas":{},"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:name":{},"f:image":{}}}}}}}`),
		entry("kubectl-edit", metav1.ManagedFieldsOperationUpdate, "", `{"f:metadata":{"f:labels":{"f:added-by-hand":{}}}}`),
	}
	out, owned, err := ToClientSide(entries, "kubectl", "kubectl-client-side-apply")
	if err != nil {
		t.Fatal(err)
	}
	if fieldsOf(t, out, "kubectl", metav1.ManagedFieldsOperationApply) != "" || fieldsOf(t, out, "kubectl-client-side-apply", metav1.ManagedFieldsOperationUpdate) == "" {
		t.Errorf("entries after: %+v", out)
	}
	got := RecordOf(&live, owned).Object
	want := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "ns", "labels": map[string]any{"app": "web"}},
		"spec": map[string]any{"replicas": int64(3), "template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "web", "image": "nginx"}}}}}}
	if !reflect.DeepEqual(normalize(t, got), normalize(t, want)) {
		t.Errorf("record\n%v\nwant\n%v", got, want)
	}
	if _, has := got["metadata"].(map[string]any)["annotations"]; has {
		t.Errorf("the record holds %s", lastapplied.Annotation)
	}
}

func normalize(t *testing.T, v map[string]any) any {
	t.Helper()
	data, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := yaml.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
