package apply_test

import (
	"net/http"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapply/kapply/pkg/schema"
)

var (
	gadgets   = k8sschema.GroupVersionResource{Group: "lists.kapply.test", Version: "v1", Resource: "gadgets"}
	plains    = k8sschema.GroupVersionResource{Group: "lists.kapply.test", Version: "v1", Resource: "plains"}
	theGadget = objRef{gadgets, "g"}
	thePlain  = objRef{plains, "p"}
)

// listCRDs declares Gadget, one list of each kind the CRD schema can mark,
// and Plain, whose list has no marker at all (so it is atomic).
const listCRDs = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.lists.kapply.test}
spec:
  group: lists.kapply.test
  names: {kind: Gadget, plural: gadgets, singular: gadget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              byName:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    value: {type: string}
                    owner: {type: string}
              byPortProtocol:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [port, protocol]
                items:
                  type: object
                  required: [port, protocol]
                  properties:
                    port: {type: integer}
                    protocol: {type: string}
                    note: {type: string}
              tags:
                type: array
                x-kubernetes-list-type: set
                items: {type: string}
              args:
                type: array
                x-kubernetes-list-type: atomic
                items: {type: string}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: plains.lists.kapply.test}
spec:
  group: lists.kapply.test
  names: {kind: Plain, plural: plains, singular: plain}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              items:
                type: array
                items:
                  type: object
                  properties:
                    name: {type: string}
                    value: {type: string}
`

// applyListCRDs applies the CRDs with kapply (they are cluster-scoped, so
// both worlds of every scenario share them) and checks that applying them
// again changes nothing.
func applyListCRDs(t *testing.T) {
	t.Helper()
	w := newWorld(t, kapplyTool, nil)
	applyFile(listCRDs).run(t, w)
	assertReapply(t, w)
}

// TestCustomResourceLists: each list of a custom resource merges by its
// schema (or a declared merge key); another writer's element survives
// kapply, while kubectl — which sends a JSON merge patch, replacing every
// list whole — loses it.
func TestCustomResourceLists(t *testing.T) {
	requireCluster(t)
	applyListCRDs(t)
	runScenarios(t, []scenario{{
		name:    "list-type map with one key",
		objects: []objRef{theGadget},
		steps: []step{
			applyFile(`
apiVersion: lists.kapply.test/v1
kind: Gadget
metadata: {name: g}
spec:
  byName: [{name: a, value: "1"}, {name: b, value: "2"}, {name: c, value: "3"}]
`),
			patchBy(theGadget, types.JSONPatchType, `[{"op":"add","path":"/spec/byName/-","value":{"name":"other","value":"o"}}]`),
			applyFile(`
apiVersion: lists.kapply.test/v1
kind: Gadget
metadata: {name: g}
spec:
  byName: [{name: a, value: "10"}, {name: c, value: "3"}]
`),
		},
		check: func(t *testing.T, live map[objRef]*unstructured.Unstructured) {
			g := live[theGadget]
			wantSet(t, keysOf(t, g, "name", "spec", "byName"), "a", "c", "other")
			wantField(t, g, "10", "spec", "byName", "[name=a]", "value")
		},
		kubectlCheck: func(t *testing.T, live map[objRef]*unstructured.Unstructured) {
			wantSet(t, keysOf(t, live[theGadget], "name", "spec", "byName"), "a", "c")
		},
	}, {
		name:    "list-map-keys with two keys",
		objects: []objRef{theGadget},
		steps: []step{
			applyFile(`
apiVersion: lists.kapply.test/v1
kind: Gadget
metadata: {name: g}
spec:
  byPortProtocol:
  - {port: 80, protocol: TCP, note: web}
  - {port: 53, protocol: UDP, note: dns}
  - {port: 53, protocol: TCP, note: dns-tcp}
`),
			patchBy(theGadget, types.JSONPatchType, `[{"op":"add","path":"/spec/byPortProtocol/-","value":{"port":443,"protocol":"TCP","note":"other"}}]`),
			applyFile(`
apiVersion: lists.kapply.test/v1
kind: Gadget
metadata: {name: g}
spec:
  byPortProtocol:
  - {port: 80, protocol: TCP, note: web2}
  - {port: 53, protocol: UDP, note: dns}
`),
		},
		check: func(t *testing.T, live map[objRef]*unstructured.Unstructured) {
			g := live[theGadget]
			wantSet(t, portProtocols(t, g), "80/TCP", "53/UDP", "443/TCP")
			wantField(t, g, "web2", "spec", "byPortProtocol", "[port=80]", "note")
		},
		kubectlCheck: func(t *testing.T, live map[objRef]*unstructured.Unstructured) {
			wantSet(t, portProtocols(t, live[theGadget]), "80/TCP", "53/UDP")
		},
	}, {
		name:    "list-type set",
		objects: []objRef{theGadget},
		steps: []step{
			applyFile(`
apiVersion: lists.kapply.test/v1
kind: Gadget
metadata: {name: g}
spec:
  tags: [red, green, blue]
`),
			patchBy(theGadget, types.JSONPatchType, `[{"op":"add","path":"/spec/tags/-","value":"other"}]`),
			applyFile(`
apiVersion: lists.kapply.test/v1
kind: Gadget
metadata: {name: g}
spec:
  tags: [red, blue, yellow]
`),
		},
		check: func(t *testing.T, live map[objRef]*unstructured.Unstructured) {
			wantSet(t, keysOf(t, live[theGadget], "", "spec", "tags"), "red", "blue", "yellow", "other")
		},
		kubectlCheck: func(t *testing.T, live map[objRef]*unstructured.Unstructured) {
			wantSet(t, keysOf(t, live[theGadget], "", "spec", "tags"), "red", "blue", "yellow")
		},
	}, {
		// Atomic: the file owns the whole list, so kapply and kubectl agree
		// and the other writer's element is gone.
		name:    "atomic list",
		objects: []objRef{theGadget},
		steps: []step{
			applyFile(`
apiVersion: lists.kapply.test/v1
kind: Gadget
metadata: {name: g}
spec:
  args: [--a, --b]
`),
			patchBy(theGadget, types.JSONPatchType, `[{"op":"add","path":"/spec/args/-","value":"--other"}]`),
			applyFile(`
apiVersion: lists.kapply.test/v1
kind: Gadget
metadata: {name: g}
spec:
  args: [--a, --c]
`),
		},
		check: func(t *testing.T, live map[objRef]*unstructured.Unstructured) {
			wantField(t, live[theGadget], []any{"--a", "--c"}, "spec", "args")
		},
	}, {
		name:      "no list markers and a declared merge key",
		objects:   []objRef{thePlain},
		mergeKeys: []schema.Override{mustMergeKey(t, "Plain.lists.kapply.test:spec.items=name")},
		steps: []step{
			applyFile(`
apiVersion: lists.kapply.test/v1
kind: Plain
metadata: {name: p}
spec:
  items: [{name: a, value: "1"}, {name: b, value: "2"}]
`),
			patchBy(thePlain, types.JSONPatchType, `[{"op":"add","path":"/spec/items/-","value":{"name":"other","value":"o"}}]`),
			applyFile(`
apiVersion: lists.kapply.test/v1
kind: Plain
metadata: {name: p}
spec:
  items: [{name: a, value: "10"}]
`),
		},
		check: func(t *testing.T, live map[objRef]*unstructured.Unstructured) {
			p := live[thePlain]
			wantSet(t, keysOf(t, p, "name", "spec", "items"), "a", "other")
			wantField(t, p, "10", "spec", "items", "[name=a]", "value")
		},
		kubectlCheck: func(t *testing.T, live map[objRef]*unstructured.Unstructured) {
			wantSet(t, keysOf(t, live[thePlain], "name", "spec", "items"), "a")
		},
	}})
}

// portProtocols lists the byPortProtocol keys as "port/protocol".
func portProtocols(t *testing.T, g *unstructured.Unstructured) []string {
	t.Helper()
	ports := keysOf(t, g, "port", "spec", "byPortProtocol")
	protocols := keysOf(t, g, "protocol", "spec", "byPortProtocol")
	out := make([]string, len(ports))
	for i := range ports {
		out[i] = ports[i] + "/" + protocols[i]
	}
	return out
}

func mustMergeKey(t *testing.T, s string) schema.Override {
	t.Helper()
	o, err := schema.ParseMergeKey(s)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestCustomResourceConcurrentWriterIsNotLost: kapply must send a list of a
// custom resource whole (JSON merge patch), so its patch carries the
// resourceVersion it planned against. Another writer adds an element between
// kapply's read and its patch: the server answers 409, kapply reads again,
// plans again, and the element survives.
func TestCustomResourceConcurrentWriterIsNotLost(t *testing.T) {
	requireCluster(t)
	applyListCRDs(t)
	w := newWorld(t, kapplyTool, nil)
	applyFile(`
apiVersion: lists.kapply.test/v1
kind: Gadget
metadata: {name: g}
spec:
  byName: [{name: a, value: "1"}, {name: b, value: "2"}]
`).run(t, w)

	rec := &patchRecorder{
		match: func(r *http.Request) bool {
			return r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, "/gadgets/g")
		},
		beforeFirst: func() error {
			return jsonPatch(w, theGadget, `[{"op":"add","path":"/spec/byName/-","value":{"name":"late","value":"l"}}]`)
		},
	}
	path := writeManifest(t, w, `
apiVersion: lists.kapply.test/v1
kind: Gadget
metadata: {name: g}
spec:
  byName: [{name: a, value: "10"}]
`)
	events := kapplyRunWith(t, w, path, rec.wrap)
	failOnFailures(t, events)
	if err := rec.hookErr; err != nil {
		t.Fatalf("the concurrent write failed: %v", err)
	}

	calls := rec.recorded()
	if len(calls) != 2 || calls[0].status != http.StatusConflict || calls[1].status != http.StatusOK {
		t.Fatalf("patches sent: %v; want a 409 for the first (stale resourceVersion), then a 200", calls)
	}
	if !strings.Contains(calls[0].body, `"resourceVersion"`) || calls[0].contentType != string(types.MergePatchType) {
		t.Errorf("first patch: %s %s; want a JSON merge patch carrying metadata.resourceVersion", calls[0].contentType, calls[0].body)
	}
	g := get(t, w, theGadget)
	wantSet(t, keysOf(t, g, "name", "spec", "byName"), "a", "late")
	wantField(t, g, "10", "spec", "byName", "[name=a]", "value")
}
