package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapply/kapply/pkg/plan"
)

var clusterRoleBindings = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}

// TestApplyPlanRefusesTamperedPlan: a plan edited by someone who can
// recompute its checksum (plan.Decode, edit, plan.Encode) ran what no file
// declares, exit 0. Each edit — a patch given data.evil and a label, an
// appended create of a ClusterRoleBinding to cluster-admin, a prune item
// naming an object outside the ApplySet, one naming a declared object — is
// refused with exit 1 naming the item, and nothing is written: not even
// the plan's own items. The plan as made still runs, past another writer's
// label added since.
func TestApplyPlanRefusesTamperedPlan(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := context.Background()
	dir := writeFiles(t, map[string]string{"cm.yaml": configMapYAML("web", "mode", "slow"), "old.yaml": configMapYAML("old", "k", "1")})
	mustRunKapply(t, "apply", "-f", dir, "-n", ns, "--prune", "--applyset=demo")
	cms := dynamicClient(t).Resource(configMaps).Namespace(ns)
	bystander := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "bystander"}, "data": map[string]any{"k": "v"}}}
	if _, err := cms.Create(ctx, bystander, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "old.yaml")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "cm.yaml", configMapYAML("web", "mode", "fast"))
	planFile := filepath.Join(t.TempDir(), "plan.json")
	mustRunKapply(t, "plan", "-f", dir, "-n", ns, "--prune", "--applyset=demo", "-o", planFile)
	liveOf := func(name string) *unstructured.Unstructured {
		t.Helper()
		u, err := cms.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	crbName := "kapply-tamper-" + ns
	edits := map[string]struct {
		edit func(p *plan.Plan)
		item string // named in the refusal
	}{
		"patch with data.evil and a label": {func(p *plan.Plan) {
			for i, it := range p.Items {
				if it.ID.Name == "web" {
					p.Items[i].Patch.Data = withEvil(t, it.Patch.Data)
				}
			}
		}, "ConfigMap/web -n " + ns},
		"appended ClusterRoleBinding": {func(p *plan.Plan) {
			crb := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
				"metadata": map[string]any{"name": crbName},
				"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
				"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": "default", "namespace": ns}}}}
			p.Items = append(p.Items, plan.NewCreate(crb, plan.Source{}))
		}, "ClusterRoleBinding.rbac.authorization.k8s.io/" + crbName},
		"prune outside the ApplySet": {func(p *plan.Plan) {
			p.Items = append(p.Items, plan.NewRemoval(plan.Prune, liveOf("bystander"), plan.Source{}))
		}, "ConfigMap/bystander -n " + ns},
		"prune of a declared object": {func(p *plan.Plan) {
			for i, it := range p.Items {
				if it.ID.Name == "web" {
					p.Items[i] = plan.NewRemoval(plan.Prune, liveOf("web"), plan.Source{})
				}
			}
		}, "ConfigMap/web -n " + ns},
	}
	for name, e := range edits {
		p := readPlanFile(t, planFile)
		e.edit(p)
		tampered := filepath.Join(t.TempDir(), "tampered.json")
		f, err := os.Create(tampered)
		if err != nil {
			t.Fatal(err)
		}
		if err := plan.Encode(f, p); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		f.Close()
		r := kapply(t, "apply", "--plan", tampered, "-f", dir, "-n", ns, "--applyset=demo")
		if r.code != 1 || !strings.Contains(r.stderr, e.item) {
			t.Errorf("%s: exit %d, want 1 naming %s\nstdout %s\nstderr %s", name, r.code, e.item, r.stdout, r.stderr)
		}
		web := liveOf("web")
		if mode := configMapData(t, ns, "web")["mode"]; mode != "slow" || len(web.GetLabels()) > 1 || configMapData(t, ns, "web")["evil"] != nil {
			t.Errorf("%s: web was written: data %v, labels %v", name, web.Object["data"], web.GetLabels())
		}
		liveOf("old")
		liveOf("bystander")
		if _, err := dynamicClient(t).Resource(clusterRoleBindings).Get(ctx, crbName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s: the ClusterRoleBinding was created (%v)", name, err)
		}
	}
	if _, err := cms.Patch(ctx, "web", types.MergePatchType, []byte(`{"metadata":{"labels":{"team":"other"}}}`), metav1.PatchOptions{FieldManager: "other"}); err != nil {
		t.Fatal(err)
	}
	r := kapply(t, "apply", "--plan", planFile, "-f", dir, "-n", ns, "--applyset=demo")
	if r.code != 0 || !strings.Contains(r.stdout, "configmap/web configured") || !strings.Contains(r.stdout, "configmap/old pruned") {
		t.Fatalf("the plan as made: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if web := liveOf("web"); configMapData(t, ns, "web")["mode"] != "fast" || web.GetLabels()["team"] != "other" {
		t.Errorf("web after the plan: data %v labels %v, want mode fast and the other writer's label", web.Object["data"], web.GetLabels())
	}
}

// withEvil is a ConfigMap patch that also sets data.evil and a label.
func withEvil(t *testing.T, data []byte) []byte {
	t.Helper()
	var body map[string]any
	if err := json.Unmarshal(data, &body); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(body, "yes", "data", "evil"); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(body, "yes", "metadata", "labels", "evil"); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
