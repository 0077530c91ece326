package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapply/kapply/internal/fixture"
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

// TestRollbackByAUserWhoMayOnlyRead: a user who may get and list but not
// write gets a refusal that names the permission, exit 1, and nothing is
// written (neither a member nor a revision).
func TestRollbackByAUserWhoMayOnlyRead(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := t.TempDir()
	applyArgs := []string{"apply", "-f", dir, "-n", ns, "--prune", "--applyset=web"}
	cm := func(v string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: " + v + "}\n"
	}
	writeTree(t, dir, map[string]string{"a.yaml": cm("one")})
	mustKapply(t, applyArgs...)
	writeTree(t, dir, map[string]string{"a.yaml": cm("two")})
	mustKapply(t, applyArgs...)
	reader := cluster.UserKubeconfig(t, ns, "rollback-reader", []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"secrets", "configmaps"}, Verbs: []string{"get", "list"}}})
	for _, args := range [][]string{{"rollback", "--applyset=web", "-n", ns}, {"rollback", "--applyset=web", "-n", ns, "-o", "-"}} {
		r := kapplyVia(t, reader, args...)
		if r.code != 1 || !strings.Contains(r.stderr, "forbidden") || !strings.Contains(r.stderr, "configmap") {
			t.Errorf("%v by a reader: want exit 1 naming the forbidden write, got %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		if strings.Contains(r.stderr, "panic") {
			t.Errorf("%v: %s", args, r.stderr)
		}
	}
	if got := getObject(t, rollbackConfigMaps, ns, "a").Object["data"].(map[string]any)["k"]; got != "two" {
		t.Errorf("a reader's rollback wrote: a has k=%v", got)
	}
	if out := mustKapply(t, "history", "--applyset=web", "-n", ns).stdout; strings.Count(strings.TrimSpace(out), "\n") != 2 {
		t.Errorf("a reader's rollback recorded a revision:\n%s", out)
	}
}

// TestRollbackServerSide: v1 and v2 applied server-side (v2 changes a
// value and adds a key); rollback --server-side restores the value and
// removes the key v2 added, and is a revision with kapply's manager.
func TestRollbackServerSide(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := t.TempDir()
	applyArgs := []string{"apply", "--server-side", "-f", dir, "-n", ns, "--prune", "--applyset=web"}
	writeTree(t, dir, map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: one}\n"})
	mustKapply(t, applyArgs...)
	writeTree(t, dir, map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: two, added: x}\n",
		"b.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata: {k: b}\n"})
	mustKapply(t, applyArgs...)
	mustKapply(t, "rollback", "--server-side", "--applyset=web", "-n", ns)
	data := getObject(t, rollbackConfigMaps, ns, "a").Object["data"].(map[string]any)
	if data["k"] != "one" || data["added"] != nil {
		t.Errorf("a after a server-side rollback: %v, want {k: one}", data)
	}
	if !absent(t, rollbackConfigMaps, ns, "b") {
		t.Error("b, added by v2, is still there")
	}
}

// TestRollbackPlanRefusedAfterAConcurrentWrite: between rollback -o and
// apply --plan another writer changes a member; the plan is refused naming
// it and nothing of the plan is written.
func TestRollbackPlanRefusedAfterAConcurrentWrite(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := t.TempDir()
	applyArgs := []string{"apply", "-f", dir, "-n", ns, "--prune", "--applyset=web"}
	cms := func(v string) map[string]string {
		return map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: " + v + "}\n",
			"b.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata: {k: " + v + "}\n"}
	}
	writeTree(t, dir, cms("one"))
	mustKapply(t, applyArgs...)
	writeTree(t, dir, cms("two"))
	mustKapply(t, applyArgs...)
	planFile := filepath.Join(t.TempDir(), "rollback.json")
	mustKapply(t, "rollback", "--applyset=web", "-n", ns, "-o", planFile)
	if _, err := dynClient(t).Resource(rollbackConfigMaps).Namespace(ns).Patch(context.Background(), "b", types.MergePatchType,
		[]byte(`{"data":{"k":"other"}}`), metav1.PatchOptions{FieldManager: "someone"}); err != nil {
		t.Fatal(err)
	}
	r := kapply(t, "apply", "--plan", planFile, "-n", ns, "--applyset=web")
	if r.code == 0 || !strings.Contains(r.stderr, "ConfigMap/b") || !strings.Contains(r.stderr, "changed since the plan") {
		t.Errorf("a rollback plan after a concurrent write: want it refused naming b, got %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := getObject(t, rollbackConfigMaps, ns, "b").Object["data"].(map[string]any)["k"]; got != "other" {
		t.Errorf("the concurrent write was overwritten: b has k=%v", got)
	}
}

// TestRollbackOfACustomTypeParentThroughASavedPlan: a Widget parent keeps
// its history in --history-namespace; rollback and its saved plan need
// the flag (refused by name without it), and apply --plan with it rolls
// back and records the rollback as a revision there.
func TestRollbackOfACustomTypeParentThroughASavedPlan(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	group := "rollback37.kapply.test"
	crd := strings.Replace(fixture.WidgetCRD(group), "metadata: {name: widgets.", `metadata: {labels: {applyset.kubernetes.io/is-parent-type: "true"}, name: widgets.`, 1)
	mustKapply(t, "apply", "-f", writeFiles(t, map[string]string{"crd.yaml": crd}))
	dir := t.TempDir()
	set := "--applyset=widgets." + group + "/wset"
	applyArgs := []string{"apply", "-f", dir, "-n", ns, "--prune", set, "--history-namespace", ns}
	cm := func(v string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: " + v + "}\n"
	}
	writeTree(t, dir, map[string]string{"a.yaml": cm("one")})
	mustKapply(t, applyArgs...)
	writeTree(t, dir, map[string]string{"a.yaml": cm("two")})
	mustKapply(t, applyArgs...)

	if r := kapply(t, "rollback", set, "-n", ns); r.code == 0 || !strings.Contains(r.stderr, "--history-namespace") {
		t.Errorf("rollback without --history-namespace: want it refused naming the flag, got %d\n%s", r.code, r.stderr)
	}
	planFile := filepath.Join(t.TempDir(), "rollback.json")
	mustKapply(t, "rollback", set, "-n", ns, "--history-namespace", ns, "-o", planFile)
	if r := kapply(t, "apply", "--plan", planFile, "-n", ns, set); r.code == 0 || !strings.Contains(r.stderr, "--history-namespace") {
		t.Errorf("apply --plan of the rollback without --history-namespace: want it refused naming the flag, got %d\n%s", r.code, r.stderr)
	}
	if got := getObject(t, rollbackConfigMaps, ns, "a").Object["data"].(map[string]any)["k"]; got != "two" {
		t.Fatalf("a refused run wrote: a has k=%v", got)
	}
	mustKapply(t, "apply", "--plan", planFile, "-n", ns, set, "--history-namespace", ns)
	if got := getObject(t, rollbackConfigMaps, ns, "a").Object["data"].(map[string]any)["k"]; got != "one" {
		t.Errorf("a has k=%v after the rollback, want one", got)
	}
	out := mustKapply(t, "history", set, "-n", ns, "--history-namespace", ns).stdout
	if !strings.Contains(out, `"rollback to revision 1"`) {
		t.Errorf("the rollback is not a revision:\n%s", out)
	}
}

// TestRollbackOfAConfigMapParentAndASetKubectlMade: kubectl makes the
// set (a ConfigMap parent), kapply applies twice (its history starts
// there); rollback goes back to kapply's first revision, with the
// history in ConfigMaps.
func TestRollbackOfAConfigMapParentAndASetKubectlMade(t *testing.T) {
	testcluster.Require(t, cluster)
	requireKubectl(t)
	t.Setenv("KUBECTL_APPLYSET", "true")
	ns := cluster.Namespace(t)
	dir := t.TempDir()
	cm := func(v string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: " + v + "}\n"
	}
	writeTree(t, dir, map[string]string{"a.yaml": cm("zero")})
	kubectl(t, "apply", "-f", dir, "-n", ns, "--prune", "--applyset=configmaps/web")
	applyArgs := []string{"apply", "-f", dir, "-n", ns, "--prune", "--applyset=configmaps/web"}
	writeTree(t, dir, map[string]string{"a.yaml": cm("one")})
	mustKapply(t, applyArgs...)
	writeTree(t, dir, map[string]string{"a.yaml": cm("two")})
	mustKapply(t, applyArgs...)
	mustKapply(t, "rollback", "--applyset=configmaps/web", "-n", ns)
	if got := getObject(t, rollbackConfigMaps, ns, "a").Object["data"].(map[string]any)["k"]; got != "one" {
		t.Errorf("a has k=%v after the rollback, want one", got)
	}
	if r := kapply(t, "rollback", "--applyset=configmaps/web", "-n", ns, "--to-revision", "1"); r.code != 0 {
		t.Errorf("--to-revision 1: %d %s", r.code, r.stderr)
	}
}

// TestRollbackRefusalsNameWhatIsWrong: a revision past the newest is
// said not to exist (not "not kept"); -n forgotten names the namespace
// searched; a Secret of another namespace given with -f is named as
// errors name objects (Secret ns/name), and one given twice is refused
// (no guess which value is meant); a negative revision is a usage
// error (exit 2); nothing is written.
func TestRollbackRefusalsNameWhatIsWrong(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := t.TempDir()
	applyArgs := []string{"apply", "-f", dir, "-n", ns, "--prune", "--applyset=web"}
	secret := "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\nstringData: {password: pw-review37-1}\n"
	writeTree(t, dir, map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: one}\n", "s.yaml": secret})
	mustKapply(t, applyArgs...)
	writeTree(t, dir, map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: two}\n", "s.yaml": secret})
	mustKapply(t, applyArgs...)
	other := writeFiles(t, map[string]string{"s.yaml": strings.Replace(secret, "name: creds}", "name: creds, namespace: elsewhere}", 1)})
	twice := writeFiles(t, map[string]string{"s.yaml": secret + "---\n" + strings.Replace(secret, "pw-review37-1", "pw-review37-2", 1)})
	for _, c := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"--to-revision", "7", "-n", ns}, 1, []string{"no revision 7", "the newest is 2"}},
		{[]string{"--to-revision", "-1", "-n", ns}, 2, []string{"numbered from 1"}},
		{nil, 1, []string{"secret/web in namespace default", "no revisions"}},
		{[]string{"-n", ns, "-f", other}, 1, []string{"Secret elsewhere/creds", "Secret " + ns + "/creds"}},
		{[]string{"-n", ns, "-f", twice}, 1, []string{"more than once: Secret " + ns + "/creds"}},
	} {
		r := kapply(t, append([]string{"rollback", "--applyset=web"}, c.args...)...)
		for _, want := range c.want {
			if r.code != c.code || !strings.Contains(r.stderr, want) {
				t.Errorf("rollback %v: want exit %d and %q, got %d\n%s", c.args, c.code, want, r.code, r.stderr)
			}
		}
		if strings.Contains(r.stdout+r.stderr, "pw-review37-") {
			t.Errorf("rollback %v printed the Secret's value", c.args)
		}
	}
	if got := getObject(t, rollbackConfigMaps, ns, "a").Object["data"].(map[string]any)["k"]; got != "two" {
		t.Errorf("a refused rollback wrote: a has k=%v", got)
	}
}
