package apply_test

import (
	"reflect"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

var (
	webDeployment = objRef{deployments, "web"}
	webConfigMap  = objRef{configMaps, "web"}
	webService    = objRef{services, "web"}
	webDaemonSet  = objRef{daemonSets, "web"}
	webStatefulSt = objRef{statefulSets, "web"}
)

// TestPrimitiveAndMapFields: scalars are replaced, maps merged key by key.
func TestPrimitiveAndMapFields(t *testing.T) {
	runScenarios(t, []scenario{{
		name:    "replicas and image are replaced",
		objects: []objRef{webDeployment},
		steps: []step{
			applyFile(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: nginx, image: "nginx:1.16"}
`),
			applyFile(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: nginx, image: "nginx:1.17"}
`),
		},
		check: func(t *testing.T, live map[objRef]*unstructured.Unstructured) {
			d := live[webDeployment]
			wantField(t, d, 3, "spec", "replicas")
			wantField(t, d, "nginx:1.17", "spec", "template", "spec", "containers", "[name=nginx]", "image")
		},
	}, {
		name:    "labels annotations and data are merged, another writer's keys survive",
		objects: []objRef{webConfigMap},
		steps: []step{
			applyFile(`
apiVersion: v1
kind: ConfigMap
metadata:
  name: web
  labels: {app: web, tier: frontend}
  annotations: {team: a, note: old}
data: {a: "1", b: "2"}
`),
			patchBy(webConfigMap, types.MergePatchType, `{"metadata":{"labels":{"owner":"other"},"annotations":{"audit":"yes"}},"data":{"c":"3"}}`),
			applyFile(`
apiVersion: v1
kind: ConfigMap
metadata:
  name: web
  labels: {app: web, tier: backend}
  annotations: {team: a}
data: {a: "10"}
`),
		},
		check: func(t *testing.T, live map[objRef]*unstructured.Unstructured) {
			cm := live[webConfigMap]
			wantField(t, cm, map[string]any{"app": "web", "tier": "backend", "owner": "other"}, "metadata", "labels")
			wantField(t, cm, "yes", "metadata", "annotations", "audit")
			wantField(t, cm, nil, "metadata", "annotations", "note")
			wantField(t, cm, map[string]any{"a": "10", "c": "3"}, "data")
		},
	}})
}

// TestListFields: a list of scalars without a patch strategy is replaced
// whole; lists of objects with a merge key are merged element by element.
func TestListFields(t *testing.T) {
	runScenarios(t, []scenario{{
		name:    "args are replaced whole",
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
      - {name: nginx, image: "nginx:1.16", args: [a, b]}
`),
			patchBy(webDeployment, types.StrategicMergePatchType, `{"spec":{"template":{"spec":{"containers":[{"name":"nginx","args":["a","b","d"]}]}}}}`),
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
      - {name: nginx, image: "nginx:1.16", args: [a, c]}
`),
		},
		check: func(t *testing.T, live map[objRef]*unstructured.Unstructured) {
			wantField(t, live[webDeployment], []any{"a", "c"}, "spec", "template", "spec", "containers", "[name=nginx]", "args")
		},
	}, {
		name:    "containers are merged by name keeping another writer's container and field",
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
      - {name: nginx-helper-a, image: "helper:1.3"}
      - {name: nginx-helper-b, image: "helper:1.3"}
`),
			patchBy(webDeployment, types.StrategicMergePatchType, `{"spec":{"template":{"spec":{"containers":[
				{"name":"nginx-helper-b","args":["run"]},
				{"name":"nginx-helper-d","image":"helper:1.3"}]}}}}`),
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
      - {name: nginx-helper-b, image: "helper:1.3"}
      - {name: nginx-helper-c, image: "helper:1.3"}
`),
		},
		check: func(t *testing.T, live map[objRef]*unstructured.Unstructured) {
			d := live[webDeployment]
			containers := []string{"spec", "template", "spec", "containers"}
			wantSet(t, keysOf(t, d, "name", containers...), "nginx", "nginx-helper-b", "nginx-helper-c", "nginx-helper-d")
			wantField(t, d, []any{"run"}, append(containers, "[name=nginx-helper-b]", "args")...)
		},
	}, {
		name:    "env is merged by name, an entry removed from the file is deleted",
		objects: []objRef{webDaemonSet},
		steps: []step{
			applyFile(`
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: agent
        image: "agent:1"
        env: [{name: A, value: "1"}, {name: B, value: "2"}, {name: C, value: "3"}]
`),
			patchBy(webDaemonSet, types.StrategicMergePatchType, `{"spec":{"template":{"spec":{"containers":[{"name":"agent","env":[{"name":"D","value":"4"}]}]}}}}`),
			applyFile(`
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: agent
        image: "agent:1"
        env: [{name: A, value: "10"}, {name: C, value: "3"}]
`),
		},
		check: func(t *testing.T, live map[objRef]*unstructured.Unstructured) {
			env := []string{"spec", "template", "spec", "containers", "[name=agent]", "env"}
			ds := live[webDaemonSet]
			wantSet(t, keysOf(t, ds, "name", env...), "A", "C", "D")
			wantField(t, ds, "10", append(env, "[name=A]", "value")...)
			wantField(t, ds, "4", append(env, "[name=D]", "value")...)
		},
	}, {
		name:    "service ports are merged by port",
		objects: []objRef{webService},
		steps: []step{
			applyFile(`
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports:
  - {name: http, port: 80, targetPort: 8080}
  - {name: metrics, port: 9090, targetPort: 9090}
`),
			patchBy(webService, types.StrategicMergePatchType, `{"spec":{"ports":[{"name":"https","port":443,"targetPort":8443}]}}`),
			applyFile(`
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports:
  - {name: http, port: 80, targetPort: 8081}
`),
		},
		check: func(t *testing.T, live map[objRef]*unstructured.Unstructured) {
			svc := live[webService]
			wantSet(t, keysOf(t, svc, "port", "spec", "ports"), "80", "443")
			wantField(t, svc, 8081, "spec", "ports", "[port=80]", "targetPort")
		},
	}, {
		name:    "finalizers are merged as a set",
		objects: []objRef{webConfigMap},
		steps: []step{
			applyFile(`
apiVersion: v1
kind: ConfigMap
metadata:
  name: web
  finalizers: [example.com/a, example.com/b]
`),
			patchBy(webConfigMap, types.StrategicMergePatchType, `{"metadata":{"finalizers":["example.com/c"]}}`),
			applyFile(`
apiVersion: v1
kind: ConfigMap
metadata:
  name: web
  finalizers: [example.com/a, example.com/d]
`),
		},
		check: func(t *testing.T, live map[objRef]*unstructured.Unstructured) {
			wantSet(t, live[webConfigMap].GetFinalizers(), "example.com/a", "example.com/c", "example.com/d")
		},
	}})
}

// TestRemovedAndClearedFields: a field dropped from the file is deleted,
// null in the file deletes a field, and a map whose keys retain (the
// Deployment strategy) loses the server's defaults when its type changes.
func TestRemovedAndClearedFields(t *testing.T) {
	runScenarios(t, []scenario{{
		name:    "minReadySeconds and a label removed from the file are deleted",
		objects: []objRef{webStatefulSt},
		steps: []step{
			applyFile(`
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
  labels: {app: web, stage: canary}
spec:
  serviceName: web
  minReadySeconds: 5
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: db, image: "db:1"}
`),
			applyFile(`
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
  labels: {app: web}
spec:
  serviceName: web
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: db, image: "db:1"}
`),
		},
		check: func(t *testing.T, live map[objRef]*unstructured.Unstructured) {
			sts := live[webStatefulSt]
			wantField(t, sts, nil, "spec", "minReadySeconds")
			wantField(t, sts, map[string]any{"app": "web"}, "metadata", "labels")
			wantField(t, sts, "RollingUpdate", "spec", "updateStrategy", "type")
		},
	}, {
		name:    "strategy switched to Recreate drops the defaulted rollingUpdate",
		objects: []objRef{webDeployment},
		steps: []step{
			applyFile(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: nginx}}
  template:
    metadata: {labels: {app: nginx}}
    spec:
      containers:
      - name: nginx
        image: "nginx:1.14.2"
        ports: [{containerPort: 80}]
`),
			applyFile(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  strategy: {type: Recreate}
  selector: {matchLabels: {app: nginx}}
  template:
    metadata: {labels: {app: nginx}}
    spec:
      containers:
      - name: nginx
        image: "nginx:1.14.2"
        ports: [{containerPort: 80}]
`),
		},
		check: func(t *testing.T, live map[objRef]*unstructured.Unstructured) {
			wantField(t, live[webDeployment], map[string]any{"type": "Recreate"}, "spec", "strategy")
		},
	}, {
		name:    "null in the file clears fields another writer set",
		objects: []objRef{webDeployment},
		steps: []step{
			applyFile(`
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: nginx, image: "nginx:1.16"}
`),
			patchBy(webDeployment, types.MergePatchType, `{"metadata":{"labels":{"owner":"other"}},"spec":{"minReadySeconds":10}}`),
			applyFile(`
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web, owner: null}
spec:
  minReadySeconds: null
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: nginx, image: "nginx:1.16"}
`),
		},
		check: func(t *testing.T, live map[objRef]*unstructured.Unstructured) {
			d := live[webDeployment]
			wantField(t, d, nil, "spec", "minReadySeconds")
			wantField(t, d, map[string]any{"app": "web"}, "metadata", "labels")
		},
	}, {
		name:    "null in the file lets the server default a field again",
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
`),
			patchBy(webDeployment, types.MergePatchType, `{"spec":{"revisionHistoryLimit":3}}`),
			applyFile(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  revisionHistoryLimit: null
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: nginx, image: "nginx:1.16"}
`),
		},
		check: func(t *testing.T, live map[objRef]*unstructured.Unstructured) {
			wantField(t, live[webDeployment], 10, "spec", "revisionHistoryLimit")
		},
		// The file keeps asking to clear a field the server sets again:
		// every apply sends that request, as kubectl's does, but kapply
		// reports unchanged since the server stores nothing (kubectl:
		// configured).
	}})
}

// TestScaleThenApply: `kubectl scale` writes replicas; the file decides
// whether the next apply keeps or resets them.
func TestScaleThenApply(t *testing.T) {
	const withReplicas = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: nginx, image: "nginx:1.16"}
`
	const withoutReplicas = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: nginx, image: "nginx:1.17"}
`
	replicas := func(want int) func(*testing.T, map[objRef]*unstructured.Unstructured) {
		return func(t *testing.T, live map[objRef]*unstructured.Unstructured) {
			wantField(t, live[webDeployment], want, "spec", "replicas")
		}
	}
	runScenarios(t, []scenario{{
		name:    "a file without replicas keeps the scaled value",
		objects: []objRef{webDeployment},
		steps:   []step{applyFile(withoutReplicas), scaleTo(webDeployment, 5), applyFile(withoutReplicas)},
		check:   replicas(5),
	}, {
		name:    "a file with replicas resets the scaled value",
		objects: []objRef{webDeployment},
		steps:   []step{applyFile(withReplicas), scaleTo(webDeployment, 5), applyFile(withReplicas)},
		check:   replicas(2),
	}, {
		name:    "replicas dropped from the file after a scale are deleted and defaulted",
		objects: []objRef{webDeployment},
		steps:   []step{applyFile(withReplicas), scaleTo(webDeployment, 5), applyFile(withoutReplicas)},
		check:   replicas(1),
	}})
}

// wantSet compares a list with the wanted values, ignoring order (the
// order is compared with kubectl's).
func wantSet(t *testing.T, got []string, want ...string) {
	t.Helper()
	g, w := slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))
	if !reflect.DeepEqual(g, w) {
		t.Errorf("got %q, want %q in any order", got, want)
	}
}
