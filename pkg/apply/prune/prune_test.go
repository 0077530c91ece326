package prune

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

func testMapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper([]schema.GroupVersion{{Version: "v1"}})
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, meta.RESTScopeNamespace)
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, meta.RESTScopeRoot)
	return m
}

func object(kind, ns, name, uid string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetUID(types.UID(uid))
	return u
}

// TestSetIsKubectls: the set's ID is KEP-3659's (kubectl's), members are
// labelled with it, and the parent records kinds and other namespaces,
// the members of before the run too when asked for the superset.
func TestSetIsKubectls(t *testing.T) {
	set, err := ParseSet("web", "shop", testMapper())
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("web.shop.Secret."))
	if want := "applyset-" + base64.RawURLEncoding.EncodeToString(sum[:]) + "-v1"; set.ID() != want {
		t.Errorf("ID %s, want %s", set.ID(), want)
	}
	parent := object("Secret", "shop", "web", "")
	parent.SetLabels(map[string]string{applySetIDLabel: set.ID()})
	parent.SetAnnotations(map[string]string{applySetToolingKey: "kubectl/v1.30.0", applySetKindsKey: "Namespace", applySetNamespacesKey: "old"})
	if err := set.ReadParent(parent, testMapper()); err != nil {
		t.Fatal(err)
	}
	cm := object("ConfigMap", "", "a", "")
	set.Add(cm, "other")
	if cm.GetLabels()[PartOfLabel] != set.ID() {
		t.Errorf("member labels %v", cm.GetLabels())
	}
	for superset, want := range map[bool]string{false: `"ConfigMap" "other"`, true: `"ConfigMap,Namespace" "old,other"`} {
		body, err := set.ParentPatch(superset)
		if err != nil {
			t.Fatal(err)
		}
		var p unstructured.Unstructured
		if err := json.Unmarshal(body, &p.Object); err != nil {
			t.Fatal(err)
		}
		a := p.GetAnnotations()
		if got := `"` + a[applySetKindsKey] + `" "` + a[applySetNamespacesKey] + `"`; got != want || a[applySetToolingKey] != "kubectl/v1.30.0" {
			t.Errorf("superset %v: kinds, namespaces %s, want %s (tooling %q)", superset, got, want, a[applySetToolingKey])
		}
	}
	parent.SetAnnotations(map[string]string{applySetToolingKey: "helm/v3"})
	if err := set.ReadParent(parent, testMapper()); err == nil || !strings.Contains(err.Error(), `tooling "helm/v3"`) {
		t.Errorf("another tool's parent: %v", err)
	}
}

// TestSelectKeepsDeclaredAndProtected: objects declared by UID or by
// file key stay; a Namespace goes only when the allowlist names it.
func TestSelectKeepsDeclaredAndProtected(t *testing.T) {
	mapper := testMapper()
	cmMapping, _ := mapper.RESTMapping(schema.GroupKind{Kind: "ConfigMap"})
	nsMapping, _ := mapper.RESTMapping(schema.GroupKind{Kind: "Namespace"})
	keep := NewDeclared()
	keep.AddFile(object("ConfigMap", "shop", "by-key", ""))
	keep.AddApplied(object("ConfigMap", "shop", "renamed-elsewhere", "uid-1"))
	found := []Candidate{
		{cmMapping, object("ConfigMap", "shop", "by-key", "uid-9")},
		{cmMapping, object("ConfigMap", "shop", "by-uid", "uid-1")},
		{cmMapping, object("ConfigMap", "shop", "dropped", "uid-2")},
		{nsMapping, object("Namespace", "", "old", "uid-3")},
	}
	remove, protected := Select(found, keep, false)
	if len(remove) != 1 || remove[0].Live.GetName() != "dropped" || len(protected) != 1 || protected[0].Live.GetName() != "old" {
		t.Errorf("remove %v, protected %v", remove, protected)
	}
	if remove, _ := Select(found, keep, true); len(remove) != 2 {
		t.Errorf("with the protected kinds allowed: remove %d, want 2", len(remove))
	}
}

// TestRefusal: pruning refuses after load errors, unmapped or failed
// objects, and an empty run unless AllowEmpty.
func TestRefusal(t *testing.T) {
	for run, want := range map[Run]string{
		{LoadErrors: 1, Objects: 3}: "could not be loaded",
		{Unmapped: 2, Objects: 3}:   "could not be mapped",
		{Failed: 1, Objects: 3}:     "failed to apply",
		{}:                          "prune.Options.AllowEmpty",
		{Objects: 3}:                "",
	} {
		err := Options{Selector: "app=web"}.Refusal(run)
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("%+v: %v, want %q", run, err, want)
		}
	}
	if err := (Options{AllowEmpty: true, All: true}).Refusal(Run{}); err != nil {
		t.Errorf("AllowEmpty: %v", err)
	}
	if err := (Options{}).Refusal(Run{Objects: 3}); err == nil || !strings.Contains(err.Error(), "prune.Options.All") {
		t.Errorf("neither selector nor ApplySet nor All: %v, want refused", err)
	}
}

// TestAllowedKinds: kubectl's default list, or the user's entries.
func TestAllowedKinds(t *testing.T) {
	m := testMapper()
	mappings, explicit, err := Options{Allowlist: []string{"core/v1/ConfigMap", "/v1/Namespace"}}.AllowedKinds(m)
	if err != nil || !explicit || len(mappings) != 2 {
		t.Errorf("explicit list: %d mappings, explicit %v, %v", len(mappings), explicit, err)
	}
	if _, _, err := (Options{Allowlist: []string{"ConfigMap"}}).AllowedKinds(m); err == nil || !strings.Contains(err.Error(), "want group/version/kind") {
		t.Errorf("bad entry: %v", err)
	}
}
