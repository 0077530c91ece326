package merge

import (
	"encoding/json"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapply/kapply/pkg/schema"
)

// crKind is a custom resource schema built by hand: every list strategy,
// an atomic map and a preserve-unknown-fields subtree.
func crKind() *schema.Kind {
	scalar := &schema.Node{Type: schema.Scalar}
	obj := func(fields map[string]*schema.Node) *schema.Node {
		return &schema.Node{Type: schema.Object, Fields: fields}
	}
	list := func(lt schema.ListType, elem *schema.Node, keys ...string) *schema.Node {
		return &schema.Node{Type: schema.List, List: lt, Elem: elem, Keys: keys}
	}
	item := obj(map[string]*schema.Node{"name": scalar, "value": scalar, "extra": scalar})
	port := obj(map[string]*schema.Node{"port": scalar, "protocol": scalar, "name": scalar})
	return &schema.Kind{Root: obj(map[string]*schema.Node{
		"apiVersion": scalar, "kind": scalar,
		"metadata": obj(map[string]*schema.Node{
			"name": scalar, "resourceVersion": scalar,
			"labels": {Type: schema.Object, Elem: scalar},
		}),
		"spec": obj(map[string]*schema.Node{
			"items":  list(schema.Map, item, "name"),
			"ports":  list(schema.Map, port, "port", "protocol"),
			"tags":   list(schema.Set, scalar),
			"args":   list(schema.Atomic, scalar),
			"config": {Type: schema.Object, Elem: scalar, AtomicMap: true},
			"free":   {Type: schema.Object, PreserveUnknown: true},
			"size":   scalar,
		}),
	})}
}

// crCase: the merged object we expect and whether the merge patch must
// carry resourceVersion.
type crCase struct {
	name              string
	lastApplied, file string
	live              string
	want              string
	wantRV            bool
}

func TestCustomResourceMerge(t *testing.T) {
	const rv = `metadata: {name: x, resourceVersion: "9"}` + "\n"
	for _, tc := range []crCase{{
		name:        "map list with one key keeps another writer's element",
		lastApplied: `spec: {items: [{name: a, value: "1"}, {name: b}]}`,
		file:        `spec: {items: [{name: a, value: "2"}, {name: c}]}`,
		live:        rv + `spec: {items: [{name: a, value: "1", extra: e}, {name: b}, {name: other}]}`,
		want:        rv + `spec: {items: [{name: a, value: "2", extra: e}, {name: c}, {name: other}]}`,
		wantRV:      true,
	}, {
		name:        "map list with two keys",
		lastApplied: `spec: {ports: [{port: 53, protocol: TCP}, {port: 80, protocol: TCP}]}`,
		file:        `spec: {ports: [{port: 53, protocol: TCP}, {port: 53, protocol: UDP, name: dns}]}`,
		live:        rv + `spec: {ports: [{port: 53, protocol: TCP, name: t}, {port: 80, protocol: TCP}, {port: 8080, protocol: TCP}]}`,
		want:        rv + `spec: {ports: [{port: 53, protocol: TCP, name: t}, {port: 53, protocol: UDP, name: dns}, {port: 8080, protocol: TCP}]}`,
		wantRV:      true,
	}, {
		name:        "set list",
		lastApplied: `spec: {tags: [a, b]}`,
		file:        `spec: {tags: [a, c]}`,
		live:        rv + `spec: {tags: [b, z, a]}`,
		want:        rv + `spec: {tags: [z, a, c]}`,
		wantRV:      true,
	}, {
		name:        "atomic list and atomic map replaced without a guard",
		lastApplied: `spec: {args: [a], config: {a: "1"}}`,
		file:        `spec: {args: [b], config: {b: "2"}}`,
		live:        rv + `spec: {args: [a, z], config: {a: "1", z: "0"}}`,
		want:        rv + `spec: {args: [b], config: {b: "2"}}`,
	}, {
		name:        "unknown subtree: maps merge, lists atomic",
		lastApplied: `spec: {free: {a: {x: 1, gone: 2}, list: [{name: a}]}}`,
		file:        `spec: {free: {a: {x: 2}, list: [{name: b}]}}`,
		live:        rv + `spec: {free: {a: {x: 1, gone: 2, mine: 3}, list: [{name: a}, {name: z}], other: o}}`,
		want:        rv + `spec: {free: {a: {x: 2, mine: 3}, list: [{name: b}], other: o}}`,
	}, {
		name:        "scalar change needs no guard; removed field goes",
		lastApplied: `spec: {size: 1, items: [{name: a}]}`,
		file:        `spec: {size: 2}`,
		live:        rv + `spec: {size: 1, items: [{name: a}]}`,
		want:        rv + `spec: {size: 2}`,
	}, {
		// The guard has nothing to carry: the patch must not gain an empty
		// metadata, which the server would add to an object lacking one.
		name: "keyed list changed on a live object without resourceVersion",
		file: `spec: {items: [{name: a}]}`,
		live: `spec: {items: [{name: b}]}`,
		want: `spec: {items: [{name: a}, {name: b}]}`,
	}, {
		// The file's own resourceVersion is already a precondition.
		name:   "guard keeps a resourceVersion the file sets",
		file:   `metadata: {resourceVersion: "8"}` + "\n" + `spec: {items: [{name: a}]}`,
		live:   rv + `spec: {items: [{name: b}]}`,
		want:   `metadata: {name: x, resourceVersion: "8"}` + "\n" + `spec: {items: [{name: a}, {name: b}]}`,
		wantRV: false,
	}, {
		// The null that would drop it gives way to live's: the server
		// assigns a new one on every write anyway.
		name:        "guard replaces a resourceVersion dropped from the file",
		lastApplied: `metadata: {resourceVersion: "7"}` + "\n" + `spec: {items: [{name: b}]}`,
		file:        `metadata: {name: x}` + "\n" + `spec: {items: [{name: a}]}`,
		live:        rv + `spec: {items: [{name: b}, {name: z}]}`,
		want:        `metadata: {name: x}` + "\n" + `spec: {items: [{name: a}, {name: z}]}`,
		wantRV:      true,
	}, {
		name:   "unchanged keyed list is not sent",
		file:   `spec: {items: [{name: a}], size: 3}`,
		live:   rv + `spec: {items: [{name: a}, {name: b}], size: 1}`,
		want:   rv + `spec: {items: [{name: a}, {name: b}], size: 3}`,
		wantRV: false,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			checkCustom(t, tc)
		})
	}
}

func checkCustom(t *testing.T, tc crCase) {
	l, f, c := decodeYAML(t, tc.lastApplied), decodeYAML(t, tc.file), decodeYAML(t, tc.live)
	plan, err := ThreeWay(l, f, c, crKind())
	if err != nil {
		t.Fatalf("ThreeWay: %v", err)
	}
	if ok, d := sameObject(decodeYAML(t, tc.want), plan.Merged, false); !ok {
		t.Errorf("merged:\n%s", d)
	}
	if plan.Patch.Type != types.MergePatchType {
		t.Errorf("patch type %s", plan.Patch.Type)
	}
	applied, err := jsonpatch.MergePatch(encodeJSON(t, c), plan.Patch.Data)
	if err != nil {
		t.Fatalf("applying merge patch: %v", err)
	}
	if ok, d := sameObject(plan.Merged, withoutGuard(decodeJSON(t, applied), plan.Merged), false); !ok {
		t.Errorf("merge patch %s applied to live differs from merged:\n%s", plan.Patch.Data, d)
	}
	var body map[string]any
	if err := json.Unmarshal(plan.Patch.Data, &body); err != nil {
		t.Fatalf("decoding patch: %v", err)
	}
	if got := asMap(body["metadata"])["resourceVersion"] == "9"; got != tc.wantRV {
		t.Errorf("patch %s: carries resourceVersion = %v, want %v", plan.Patch.Data, got, tc.wantRV)
	}
}
