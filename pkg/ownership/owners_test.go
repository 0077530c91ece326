package ownership

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	smdfieldpath "sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/yaml"

	"github.com/kapply/kapply/pkg/fieldpath"
)

// liveWithOwners is a Deployment as the server records three writers: an
// apply by kapply, a scale through the subresource, and the controller's
// status.
const liveWithOwners = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  managedFields:
  - manager: kapply
    operation: Update
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata: {f:labels: {.: {}, f:app: {}}}
      f:spec:
        f:template:
          f:spec:
            f:containers:
              k:{"name":"web"}:
                .: {}
                f:image: {}
                f:args: {}
                f:ports:
                  k:{"containerPort":80,"protocol":"TCP"}: {.: {}, f:containerPort: {}}
  - manager: kubectl
    operation: Update
    subresource: scale
    fieldsType: FieldsV1
    fieldsV1: {f:spec: {f:replicas: {}}}
  - manager: kube-controller-manager
    operation: Update
    subresource: status
    fieldsType: FieldsV1
    fieldsV1: {f:status: {f:replicas: {}}}
`

func TestOwnersOf(t *testing.T) {
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(liveWithOwners), &obj); err != nil {
		t.Fatal(err)
	}
	owners, err := Owners(&unstructured.Unstructured{Object: obj})
	if err != nil {
		t.Fatal(err)
	}
	web := fieldpath.Key([]fieldpath.KeyValue{{Name: "name", Value: "web"}})
	port := fieldpath.Key([]fieldpath.KeyValue{{Name: "containerPort", Value: int64(80)}})
	containers := fieldpath.Fields("spec", "template", "spec", "containers")
	cases := map[string]struct {
		path fieldpath.Path
		want []string
	}{
		"scaled field":                {fieldpath.Fields("spec", "replicas"), []string{"kubectl (scale)"}},
		"status":                      {fieldpath.Fields("status", "replicas"), []string{"kube-controller-manager (status)"}},
		"a parent holds owned fields": {fieldpath.Fields("spec"), []string{"kapply", "kubectl (scale)"}},
		"keyed element":               {containers.Child(web).Child(fieldpath.Field("image")), []string{"kapply"}},
		"inside an atomic list":       {containers.Child(web).Child(fieldpath.Field("args")).Child(fieldpath.Index(0)), []string{"kapply"}},
		"merge key a subset":          {containers.Child(web).Child(fieldpath.Field("ports")).Child(port).Child(fieldpath.Field("containerPort")), []string{"kapply"}},
		"map itself, not its keys":    {fieldpath.Fields("metadata", "labels", "tier"), nil},
		"nobody":                      {fieldpath.Fields("spec", "paused"), nil},
	}
	for name, tc := range cases {
		if got := owners.Of(tc.path); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: Of(%s) = %q, want %q", name, tc.path, got, tc.want)
		}
	}
}

func TestOwnersErrors(t *testing.T) {
	owners, err := Owners(nil)
	if err != nil || owners.Of(fieldpath.Fields("spec")) != nil {
		t.Errorf("Owners(nil) = %v, %v; want no owners", owners, err)
	}
	bad := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"managedFields": []any{
		map[string]any{"manager": "m", "fieldsType": "FieldsV1", "fieldsV1": "not an object"},
	}}}}
	if _, err := Owners(bad); err == nil {
		t.Error("Owners accepted a malformed managedFields entry")
	}
}

// TestSMDPath: the conversion gives SMD's own paths, which it parses from
// managedFields' text (k:{"name":"web"} for a keyed element).
func TestSMDPath(t *testing.T) {
	keyed := fieldpath.Fields("spec", "containers").Child(fieldpath.KeyOf(map[string]any{"name": "web"}, []string{"name"})).Child(fieldpath.Field("image"))
	want := smdfieldpath.MakePathOrDie("spec", "containers", smdfieldpath.KeyByFields("name", "web"), "image")
	if got := SMDPath(keyed); !got.Equals(want) {
		t.Errorf("SMDPath(%s) = %s, want %s", keyed, got, want)
	}
	set := SMDSet(fieldpath.Fields("metadata", "annotations", "a"), keyed)
	if !set.Equals(smdfieldpath.NewSet(smdfieldpath.MakePathOrDie("metadata", "annotations", "a"), want)) {
		t.Errorf("SMDSet: got %s", set)
	}
}
