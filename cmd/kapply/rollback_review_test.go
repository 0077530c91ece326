package main

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapply/kapply/internal/testcluster"
)

// reviewCRD is a namespaced CRD of kind <Kind> in group review37.example.com.
func reviewCRD(plural, kind string) string {
	return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: ` + plural + `.review37.example.com}
spec:
  group: review37.example.com
  names: {kind: ` + kind + `, plural: ` + plural + `, singular: ` + strings.ToLower(kind) + `}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`
}

// TestRollbackRecreatesACRDAndItsCustomResources: revision 1 holds a CRD
// and one of its custom resources; revision 2 drops both (pruned). The
// rollback plans the CRD's creation and the resource's (the plan's prune
// step must not fail on a kind whose CRD the plan itself creates), and
// executing it creates both again. Before the fix, every plan with a new
// CRD, its resources and --applyset (rollback, diff, --confirm) failed
// with "pruning Kind.group: no matches for kind".
func TestRollbackRecreatesACRDAndItsCustomResources(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := t.TempDir()
	applyArgs := []string{"apply", "-f", dir, "-n", ns, "--prune", "--applyset=web"}
	cm := func(v string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: " + v + "}\n"
	}
	writeTree(t, dir, map[string]string{"crd.yaml": reviewCRD("rbwidgets", "RBWidget"), "a.yaml": cm("one"),
		"w.yaml": "apiVersion: review37.example.com/v1\nkind: RBWidget\nmetadata: {name: w1}\nspec: {size: 1}\n"})
	mustKapply(t, applyArgs...)
	writeTree(t, dir, map[string]string{"a.yaml": cm("two")})
	mustKapply(t, applyArgs...)
	widgets := schema.GroupVersionResource{Group: "review37.example.com", Version: "v1", Resource: "rbwidgets"}
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	// The pruned CRD terminates (its resources are deleted) before it is gone.
	for deadline := time.Now().Add(30 * time.Second); !absent(t, crds, "", "rbwidgets.review37.example.com"); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the pruned CRD is still there after 30s")
		}
	}

	saved := mustKapply(t, "rollback", "--applyset=web", "-n", ns, "-o", "-")
	if !strings.Contains(saved.stdout, `"rollbackTo"`) || !strings.Contains(saved.stderr, "2 to create") {
		t.Errorf("the rollback's plan does not create the CRD and its resource:\n%s", saved.stderr)
	}
	mustKapply(t, "rollback", "--applyset=web", "-n", ns)
	if w := getObject(t, widgets, ns, "w1"); w.Object["spec"].(map[string]any)["size"] != int64(1) {
		t.Errorf("the custom resource after the rollback: %v", w.Object["spec"])
	}
	if got := getObject(t, rollbackConfigMaps, ns, "a").Object["data"].(map[string]any)["k"]; got != "one" {
		t.Errorf("a has k=%v after the rollback, want one", got)
	}
	// The same plan from the files: diff of a new CRD with its resource.
	writeTree(t, dir, map[string]string{"crd.yaml": reviewCRD("rbgadgets", "RBGadget"), "a.yaml": cm("one"),
		"w.yaml": "apiVersion: review37.example.com/v1\nkind: RBWidget\nmetadata: {name: w1}\nspec: {size: 1}\n",
		"g.yaml": "apiVersion: review37.example.com/v1\nkind: RBGadget\nmetadata: {name: g1}\n"})
	if d := kapply(t, "diff", "-f", dir, "-n", ns, "--prune", "--applyset=web"); d.code != 1 || strings.Contains(d.stderr, "error") {
		t.Errorf("diff --prune --applyset of a new CRD and its resource: exit %d\n%s", d.code, d.stderr)
	}
}
