package plan

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kapply/kapply/pkg/merge"
)

func TestFromMergeCarriesWhatTheEngineSaid(t *testing.T) {
	it := deploymentItem(t)
	if it.Action != Update || it.Patch.Type != MergePatch || it.UID != "u-1" || it.ResourceVersion != "41" || !strings.HasPrefix(it.LastApplied, "sha256:") {
		t.Fatalf("item: %+v", it)
	}
	reasons := map[string]Reason{}
	for _, c := range it.Changes {
		reasons[c.Path.String()] = c.Reason
		if len(c.Owners) != 1 {
			t.Errorf("%s: owners %v", c.Path, c.Owners)
		}
	}
	if reasons["spec.replicas"] != SetByFile || reasons["spec.paused"] != RemovedFromFile || reasons["status"] != KeptUnmanaged {
		t.Errorf("reasons: %v", reasons)
	}
	if SetByFile.Explain() != merge.SetByFile.String() || ClearedWithParent.Explain() != merge.ClearedWithParent.String() {
		t.Error("Explain is not merge's text")
	}
}

func TestFromMergeOfNothingIsUnchanged(t *testing.T) {
	live := obj(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","uid":"u","resourceVersion":"1"},"data":{"a":"1"}}`)
	file := obj(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"1"}}`)
	mp, err := merge.ThreeWay(nil, file.Object, live.Object, nil)
	if err != nil {
		t.Fatal(err)
	}
	it := FromMerge(file, live, Source{}, mp, nil)
	if it.Action != Unchanged || it.Patch.Type != "" || it.Patch.Data != nil || it.Changes != nil {
		t.Errorf("item: %+v", it)
	}
}

func TestPatchTypesMapToTheServers(t *testing.T) {
	for _, pt := range []PatchType{StrategicPatch, MergePatch, JSONPatch, ApplyPatch} {
		if PatchTypeOf(pt.K8s()) != pt {
			t.Errorf("%s → %s → %s", pt, pt.K8s(), PatchTypeOf(pt.K8s()))
		}
	}
	if PatchTypeOf(types.ApplyCBORPatchType) != ApplyPatch || PatchTypeOf("text/plain") != "" {
		t.Error("other content types")
	}
}

func TestIDOf(t *testing.T) {
	id := IDOf(obj(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"prod"}}`))
	if id != (ID{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "prod", Name: "web"}) || id.String() != "Deployment.apps/web -n prod" {
		t.Errorf("%+v %s", id, id)
	}
}

func TestClusterSameAs(t *testing.T) {
	planned := Cluster{Server: "https://a:6443", Context: "laptop", User: "me", ID: "uid-1"}
	if err := planned.SameAs(Cluster{Server: "https://a:6443", Context: "ci", User: "robot", ID: "uid-1"}); err != nil {
		t.Errorf("other context and user names: %v", err)
	}
	for _, now := range []Cluster{{Server: "https://b:6443", ID: "uid-1"}, {Server: "https://a:6443", ID: "uid-2"}} {
		if err := planned.SameAs(now); !errors.Is(err, ErrOtherCluster) {
			t.Errorf("%+v: got %v", now, err)
		}
	}
}
