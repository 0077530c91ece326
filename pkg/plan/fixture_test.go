package plan

import (
	"bytes"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/merge"
)

// obj decodes a JSON object as the unstructured scheme does (whole numbers
// int64).
func obj(t testing.TB, text string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(text)); err != nil {
		t.Fatalf("decoding %s: %v", text, err)
	}
	return u
}

// ownersOf answers every path with the same managers.
type ownersOf []string

func (o ownersOf) Of(fieldpath.Path) []string { return o }

// deploymentItem is a patch item made by the engine from a real merge.
func deploymentItem(t testing.TB) Item {
	t.Helper()
	return namedDeploymentItem(t, "web")
}

// namedDeploymentItem is deploymentItem of the Deployment name.
func namedDeploymentItem(t testing.TB, name string) Item {
	t.Helper()
	last := map[string]any{"spec": map[string]any{"replicas": int64(2), "paused": true}}
	file := obj(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"`+name+`","namespace":"prod"},
		"spec":{"replicas":3,"ratio":0.25,"template":{"spec":{"containers":[{"name":"web","image":"nginx:2","ports":[{"containerPort":80}]}]}}}}`)
	live := obj(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"`+name+`","namespace":"prod","uid":"u-1","resourceVersion":"41",
		"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"spec\":{\"replicas\":2,\"paused\":true}}"}},
		"spec":{"replicas":2,"paused":true,"template":{"spec":{"containers":[{"name":"web","image":"nginx:1","ports":[{"containerPort":80}]}]}}},
		"status":{"readyReplicas":2}}`)
	mp, err := merge.ThreeWay(last, file.Object, live.Object, nil)
	if err != nil {
		t.Fatal(err)
	}
	return FromMerge(file, live, Source{File: "deploy.yaml", Index: 2, Line: 14}, mp, ownersOf{"kubectl-client-side-apply"})
}

// samplePlan holds an item of every action and a change path with every
// kind of step.
func samplePlan(t testing.TB) *Plan {
	t.Helper()
	cm := obj(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg","namespace":"prod"},"data":{"a":"1"}}`)
	liveCM := obj(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"old","namespace":"prod","uid":"u-2","resourceVersion":"7"}}`)
	ns := obj(t, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"prod","uid":"u-3","resourceVersion":"5"}}`)
	ssa, err := NewServerSide(obj(t, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"prod"},"spec":{"size":1e21}}`), nil, Source{File: "STDIN", Index: 1})
	if err != nil {
		t.Fatal(err)
	}
	keyed := Change{Path: fieldpath.Path{fieldpath.Field("spec"), fieldpath.Field("ports"),
		fieldpath.Key([]fieldpath.KeyValue{{Name: "port", Value: int64(80)}, {Name: "protocol", Value: "TCP"}}), fieldpath.Field("name")},
		Old: nil, New: "http", Reason: SetByFile}
	set := Change{Path: fieldpath.Path{fieldpath.Field("metadata"), fieldpath.Field("finalizers"), fieldpath.Value("example.com/x")},
		Old: "example.com/x", New: nil, Reason: RemovedFromFile}
	index := Change{Path: fieldpath.Path{fieldpath.Field("spec"), fieldpath.Field("args"), fieldpath.Index(2)},
		Old: []any{"a", int64(1), 2.5, nil, map[string]any{"x": false}}, New: nil, Reason: ClearedWithParent}
	svc := NewRemoval(Prune, obj(t, `{"apiVersion":"v1","kind":"Service","metadata":{"name":"gone","namespace":"prod","uid":"u-4","resourceVersion":"9"}}`), Source{})
	svc.Changes = []Change{keyed, set, index}
	return &Plan{
		Cluster: Cluster{Server: "https://10.0.0.1:6443", Context: "prod", User: "ci", ID: "kube-system-uid"},
		Items: []Item{
			deploymentItem(t),
			NewCreate(cm, Source{File: "cm.yaml", Index: 1, Line: 1}),
			NewRemoval(Delete, liveCM, Source{}),
			{Action: Unchanged, ID: IDOf(ns), UID: "u-3", ResourceVersion: "5", Warnings: []string{"a warning"}},
			ssa,
			svc,
		},
	}
}

func encode(t testing.TB, p *Plan) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Encode(&b, keyedCopy(p)); err != nil {
		t.Fatalf("encoding: %v", err)
	}
	return b.Bytes()
}

// reencode rewrites a document through fn on its generic form, with the
// checksum of its known content: a hostile document that only the checks
// after the checksum can refuse.
func reencode(t testing.TB, data []byte, fn func(doc map[string]any)) []byte {
	t.Helper()
	generic, ok := genericDocument(data)
	if !ok {
		t.Fatalf("not a document: %s", data)
	}
	fn(generic)
	out, _ := resummed(generic)
	return out
}
