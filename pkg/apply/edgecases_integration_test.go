package apply_test

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// TestMoreMergeCases goes past the page: retainKeys on list elements
// (volume sources), a field of a keyed element replaced by another one, a
// whole map dropped from the file, elements reordered by the file, and a
// whole custom-resource list dropped from the file.
func TestMoreMergeCases(t *testing.T) {
	requireCluster(t)
	applyListCRDs(t)
	runScenarios(t, []scenario{{
		name:    "volume source switched from emptyDir to configMap",
		objects: []objRef{webDeployment},
		steps: []step{
			applyFile(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: nginx, image: "nginx:1.16"}
      volumes:
      - {name: data, emptyDir: {}}
`),
			applyFile(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: nginx, image: "nginx:1.16"}
      volumes:
      - {name: data, configMap: {name: settings}}
`),
		},
		check: func(t *testing.T, live map[objRef]*unstructured.Unstructured) {
			vol := []string{"spec", "template", "spec", "volumes", "[name=data]"}
			d := live[webDeployment]
			wantField(t, d, nil, append(vol, "emptyDir")...)
			wantField(t, d, "settings", append(vol, "configMap", "name")...)
		},
	}, {
		name:    "env value replaced by valueFrom",
		objects: []objRef{webDeployment},
		steps: []step{
			applyFile(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: nginx
        image: "nginx:1.16"
        env: [{name: NODE, value: "n1"}]
`),
			applyFile(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: nginx
        image: "nginx:1.16"
        env: [{name: NODE, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}]
`),
		},
		check: func(t *testing.T, live map[objRef]*unstructured.Unstructured) {
			env := []string{"spec", "template", "spec", "containers", "[name=nginx]", "env", "[name=NODE]"}
			d := live[webDeployment]
			wantField(t, d, nil, append(env, "value")...)
			wantField(t, d, "spec.nodeName", append(env, "valueFrom", "fieldRef", "fieldPath")...)
		},
	}, {
		// The map itself is in the last-applied record and not in the file,
		// so it is deleted whole — another writer's label with it, as with
		// kubectl (whose patch says "labels": null).
		name:    "labels dropped from the file are deleted whole",
		objects: []objRef{webConfigMap},
		steps: []step{
			applyFile(`
apiVersion: v1
kind: ConfigMap
metadata:
  name: web
  labels: {app: web, tier: frontend}
`),
			patchBy(webConfigMap, types.MergePatchType, `{"metadata":{"labels":{"owner":"other"}}}`),
			applyFile(`
apiVersion: v1
kind: ConfigMap
metadata: {name: web}
data: {a: "1"}
`),
		},
		check: func(t *testing.T, live map[objRef]*unstructured.Unstructured) {
			wantField(t, live[webConfigMap], nil, "metadata", "labels")
		},
	}, {
		name:    "containers reordered by the file",
		objects: []objRef{webDeployment},
		steps: []step{
			applyFile(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: one, image: "one:1"}
      - {name: two, image: "two:1"}
      - {name: three, image: "three:1"}
`),
			patchBy(webDeployment, types.StrategicMergePatchType, `{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"sidecar:1"}]}}}}`),
			applyFile(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: three, image: "three:1"}
      - {name: one, image: "one:2"}
      - {name: two, image: "two:1"}
`),
		},
		check: func(t *testing.T, live map[objRef]*unstructured.Unstructured) {
			got := keysOf(t, live[webDeployment], "name", "spec", "template", "spec", "containers")
			wantSet(t, got, "three", "one", "two", "sidecar")
			fileOnes := slices.DeleteFunc(slices.Clone(got), func(name string) bool { return name == "sidecar" })
			if !slices.Equal(fileOnes, []string{"three", "one", "two"}) {
				t.Errorf("containers %q: the file's containers should keep the file's order", got)
			}
		},
	}, {
		name:    "custom resource keyed element loses a dropped field and keeps another writer's field",
		objects: []objRef{theGadget},
		steps: []step{
			applyFile(`
apiVersion: lists.kapply.test/v1
kind: Gadget
metadata: {name: g}
spec:
  byName: [{name: a, value: "1"}, {name: b, value: "2"}]
`),
			patchBy(theGadget, types.JSONPatchType, `[
				{"op":"add","path":"/spec/byName/0/owner","value":"other"},
				{"op":"add","path":"/spec/byName/-","value":{"name":"z"}}]`),
			applyFile(`
apiVersion: lists.kapply.test/v1
kind: Gadget
metadata: {name: g}
spec:
  byName: [{name: b, value: "2"}, {name: a}]
`),
		},
		check: func(t *testing.T, live map[objRef]*unstructured.Unstructured) {
			g := live[theGadget]
			got := keysOf(t, g, "name", "spec", "byName")
			wantSet(t, got, "a", "b", "z")
			if fileOnes := slices.DeleteFunc(slices.Clone(got), func(n string) bool { return n == "z" }); !slices.Equal(fileOnes, []string{"b", "a"}) {
				t.Errorf("byName %q: the file's elements should keep the file's order", got)
			}
			wantField(t, g, map[string]any{"name": "a", "owner": "other"}, "spec", "byName", "[name=a]")
		},
		kubectlCheck: func(t *testing.T, live map[objRef]*unstructured.Unstructured) {
			wantField(t, live[theGadget], []any{map[string]any{"name": "b", "value": "2"}, map[string]any{"name": "a"}}, "spec", "byName")
		},
	}, {
		name:    "a custom resource list dropped from the file is deleted",
		objects: []objRef{theGadget},
		steps: []step{
			applyFile(`
apiVersion: lists.kapply.test/v1
kind: Gadget
metadata: {name: g}
spec:
  byName: [{name: a, value: "1"}]
  tags: [red]
`),
			patchBy(theGadget, types.JSONPatchType, `[{"op":"add","path":"/spec/byName/-","value":{"name":"other","value":"o"}}]`),
			applyFile(`
apiVersion: lists.kapply.test/v1
kind: Gadget
metadata: {name: g}
spec:
  tags: [red]
`),
		},
		check: func(t *testing.T, live map[objRef]*unstructured.Unstructured) {
			wantField(t, live[theGadget], nil, "spec", "byName")
		},
	}})
}
