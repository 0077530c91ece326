package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kapply/kapply/pkg/plan"
)

func configMapYAML(name, key, value string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\ndata: {" + key + ": \"" + value + "\"}\n"
}

func dynamicClient(t *testing.T) dynamic.Interface {
	t.Helper()
	c, err := dynamic.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// mustRunKapply runs kapply and fails the test unless it exits 0.
func mustRunKapply(t *testing.T, args ...string) result {
	t.Helper()
	r := kapply(t, args...)
	if r.code != 0 {
		t.Fatalf("kapply %s: exit %d\nstdout %s\nstderr %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

func readPlanFile(t *testing.T, path string) *plan.Plan {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := plan.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func configMapData(t *testing.T, ns, name string) map[string]any {
	t.Helper()
	live, err := dynamicClient(t).Resource(configMaps).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := live.Object["data"].(map[string]any)
	return data
}

// TestApplyPlanRefusesObjectChangedSince: a plan patches three
// ConfigMaps; before it runs, another writer changes the field the plan
// writes in one and only an annotation the plan does not touch in
// another. apply --plan refuses the first, printing what changed since
// the plan as a diff, applies the other two (the second with its new
// resourceVersion, keeping the annotation) and exits 1.
func TestApplyPlanRefusesObjectChangedSince(t *testing.T) {
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{
		"a.yaml": configMapYAML("a", "mode", "fast"),
		"b.yaml": configMapYAML("b", "x", "1"),
		"c.yaml": configMapYAML("c", "z", "1"),
	})
	mustRunKapply(t, "apply", "-f", dir, "-n", ns)
	writeFile(t, dir, "a.yaml", configMapYAML("a", "mode", "slow"))
	writeFile(t, dir, "b.yaml", configMapYAML("b", "x", "2"))
	writeFile(t, dir, "c.yaml", configMapYAML("c", "z", "2"))
	planFile := filepath.Join(t.TempDir(), "plan.json")
	r := mustRunKapply(t, "plan", "-f", dir, "-n", ns, "-o", planFile)
	for _, want := range []string{"NAMESPACE", "OPERATION", "FIELDS", "REASON", "data.mode", "set-by-file", "0 to create, 3 to patch, 0 unchanged."} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("plan's table lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "managedFields") || strings.Contains(r.stdout, "creationTimestamp") {
		t.Errorf("the table names fields the plan does not write:\n%s", r.stdout)
	}
	cms := dynamicClient(t).Resource(configMaps).Namespace(ns)
	ctx := context.Background()
	if _, err := cms.Patch(ctx, "a", types.MergePatchType, []byte(`{"data":{"mode":"other"}}`), metav1.PatchOptions{FieldManager: "someone"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Patch(ctx, "b", types.MergePatchType, []byte(`{"metadata":{"annotations":{"note":"unrelated"}}}`), metav1.PatchOptions{FieldManager: "someone"}); err != nil {
		t.Fatal(err)
	}
	r = kapply(t, "apply", "--plan", planFile, "-f", dir, "-n", ns)
	if r.code != 1 {
		t.Fatalf("apply --plan: exit %d, want 1\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"configmap/b configured", "configmap/c configured"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	for _, want := range []string{"ConfigMap/a -n " + ns + " changed since the plan: data.mode", "--- ConfigMap/a -n " + ns + " (when planned)", "-data.mode: fast\n+data.mode: other\n"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stdout, "configmap/a") {
		t.Errorf("the changed object was reported applied:\n%s", r.stdout)
	}
	if got := configMapData(t, ns, "a")["mode"]; got != "other" {
		t.Errorf("a's mode = %v, want the other writer's value kept", got)
	}
	if got := configMapData(t, ns, "b")["x"]; got != "2" {
		t.Errorf("b's x = %v, want the plan's 2", got)
	}
	b, err := cms.Get(ctx, "b", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b.GetAnnotations()["note"] != "unrelated" {
		t.Errorf("b lost the other writer's annotation: %v", b.GetAnnotations())
	}
	if got := configMapData(t, ns, "c")["z"]; got != "2" {
		t.Errorf("c's z = %v, want 2", got)
	}
}

// TestApplyPlanThenPlanAgainUnchanged: plan creates and a patch, apply
// --plan writes them, and a new plan of the same files has nothing to do.
func TestApplyPlanThenPlanAgainUnchanged(t *testing.T) {
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"old.yaml": configMapYAML("old", "k", "1")})
	mustRunKapply(t, "apply", "-f", dir, "-n", ns)
	writeFile(t, dir, "old.yaml", configMapYAML("old", "k", "2"))
	writeFile(t, dir, "new.yaml", configMapYAML("new", "k", "1"))
	writeFile(t, dir, "deploy.yaml", `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx:1.27}]}
`)
	planFile := filepath.Join(t.TempDir(), "plan.json")
	mustRunKapply(t, "plan", "-f", dir, "-n", ns, "-o", planFile)
	r := mustRunKapply(t, "apply", "--plan", planFile, "-f", dir, "-n", ns)
	for _, want := range []string{"configmap/old configured", "configmap/new created", "deployment.apps/web created"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("apply --plan stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	// -o -: the plan on stdout, the table on stderr.
	r = mustRunKapply(t, "plan", "-f", dir, "-n", ns, "-o", "-")
	if !strings.Contains(r.stderr, "Plan: 0 to create, 0 to patch, 3 unchanged.") {
		t.Errorf("a new plan is not all unchanged:\n%s", r.stderr)
	}
	again, err := plan.Decode(strings.NewReader(r.stdout))
	if err != nil {
		t.Fatalf("stdout is not a plan: %v", err)
	}
	for _, it := range again.Items {
		if it.Action != plan.Unchanged {
			t.Errorf("%s: %s, want unchanged", it.ID, it.Action)
		}
	}
}

// TestApplyPlanRefusesOtherClusterVersionAndEdits: a plan whose cluster
// identity is another's (a cluster rebuilt at the same address), a plan
// of another format version and a plan edited by hand are each refused
// with a clear message and exit 1, writing nothing.
func TestApplyPlanRefusesOtherClusterVersionAndEdits(t *testing.T) {
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"cm.yaml": configMapYAML("cm", "mode", "fast")})
	tmp := t.TempDir()
	planFile := filepath.Join(tmp, "plan.json")
	mustRunKapply(t, "plan", "-f", dir, "-n", ns, "-o", planFile)
	original, err := os.ReadFile(planFile)
	if err != nil {
		t.Fatal(err)
	}
	p := readPlanFile(t, planFile)
	if p.Cluster.ID == "" || p.Cluster.Server == "" {
		t.Fatalf("the plan names no cluster: %+v", p.Cluster)
	}
	p.Cluster.ID = "0b4c2e1e-0000-4000-8000-000000000000"
	var other bytes.Buffer
	if err := plan.Encode(&other, p); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct{ content, want string }{
		"other-cluster.json": {other.String(), "the plan was made for another cluster"},
		"other-version.json": {strings.Replace(string(original), plan.APIVersion, "kapply.dev/v1beta9", 1), `apiVersion "kapply.dev/v1beta9" is not supported`},
		"edited.json":        {strings.Replace(string(original), `\"fast\"`, `\"evil\"`, 1), "the checksum does not match the content"},
	}
	for name, c := range cases {
		if c.content == string(original) {
			t.Fatalf("%s: the plan was not changed", name)
		}
		path := filepath.Join(tmp, name)
		if err := os.WriteFile(path, []byte(c.content), 0o600); err != nil {
			t.Fatal(err)
		}
		r := kapply(t, "apply", "--plan", path, "-f", dir, "-n", ns)
		if r.code != 1 || !strings.HasPrefix(r.stderr, "error: ") || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s: exit %d, want 1 with %q\nstdout %s\nstderr %s", name, r.code, c.want, r.stdout, r.stderr)
		}
	}
	_, err = dynamicClient(t).Resource(configMaps).Namespace(ns).Get(context.Background(), "cm", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("a refused plan wrote: %v", err)
	}
}

// TestApplyPlanSecretValues: a plan keeps no Secret value; apply --plan
// without the files, or with a file whose value differs from the
// planned one, is refused without printing a value; with the same file it
// creates the Secret with its value.
func TestApplyPlanSecretValues(t *testing.T) {
	ns := cluster.Namespace(t)
	const value = "planned-s3cret-value"
	secret := func(v string) string {
		return "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\nstringData: {password: " + v + "}\n"
	}
	dir := writeFiles(t, map[string]string{"secret.yaml": secret(value)})
	planFile := filepath.Join(t.TempDir(), "plan.json")
	mustRunKapply(t, "plan", "-f", dir, "-n", ns, "-o", planFile)
	doc, err := os.ReadFile(planFile)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(doc, []byte(value)) || bytes.Contains(doc, []byte(base64.StdEncoding.EncodeToString([]byte(value)))) {
		t.Fatalf("the plan file holds the Secret's value")
	}
	client := dynamicClient(t).Resource(secrets).Namespace(ns)
	notCreated := func(what string) {
		t.Helper()
		if _, err := client.Get(context.Background(), "creds", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s: the Secret was written (%v)", what, err)
		}
	}
	r := kapply(t, "apply", "--plan", planFile, "-n", ns)
	if r.code != 1 || !strings.Contains(r.stderr, "give the files the plan was made from with -f") {
		t.Errorf("without -f: exit %d\nstderr %s", r.code, r.stderr)
	}
	notCreated("without -f")
	wrong := writeFiles(t, map[string]string{"secret.yaml": secret("another-value")})
	r = kapply(t, "apply", "--plan", planFile, "-f", wrong, "-n", ns)
	if r.code != 1 || !strings.Contains(r.stderr, "stringData.password differ from the values the plan was made with") {
		t.Errorf("with another value: exit %d\nstderr %s", r.code, r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, "another-value") || strings.Contains(r.stdout+r.stderr, value) {
		t.Errorf("a Secret value was printed:\n%s\n%s", r.stdout, r.stderr)
	}
	notCreated("with another value")
	r = mustRunKapply(t, "apply", "--plan", planFile, "-f", dir, "-n", ns)
	if !strings.Contains(r.stdout, "secret/creds created") {
		t.Errorf("with the same file: %s", r.stdout)
	}
	live, err := client.Get(context.Background(), "creds", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := live.Object["data"].(map[string]any)["password"].(string)
	if decoded, _ := base64.StdEncoding.DecodeString(got); string(decoded) != value {
		t.Errorf("the Secret's password is not the file's value")
	}
}

// TestApplyPlanPrunesFromApplySet: a plan with --prune --applyset holds a
// prune item, verified like the others (refused when the object changed
// since); executed (with the same --applyset, or none) it records its new kinds on
// the parent, so that a later apply --prune deletes them.
func TestApplyPlanPrunesFromApplySet(t *testing.T) {
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"a.yaml": configMapYAML("a", "k", "1"), "b.yaml": configMapYAML("b", "k", "1")})
	mustRunKapply(t, "apply", "-f", dir, "-n", ns, "--prune", "--applyset=web")
	if err := os.Remove(filepath.Join(dir, "b.yaml")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "svc.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 80}]}\n")
	planFile := filepath.Join(t.TempDir(), "plan.json")
	r := mustRunKapply(t, "plan", "-f", dir, "-n", ns, "--prune", "--applyset=web", "-o", planFile)
	for _, want := range []string{"prune (deletes)", "no longer in the files", "Service", "1 to create, 0 to patch, 1 to prune (delete), 1 unchanged."} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the table lacks %q:\n%s", want, r.stdout)
		}
	}
	cms := dynamicClient(t).Resource(configMaps).Namespace(ns)
	ctx := context.Background()
	r = kapply(t, "apply", "--plan", planFile, "-f", dir, "-n", ns, "--applyset=other")
	if r.code != 1 || !strings.Contains(r.stderr, `the plan was made with --applyset="web", not "other"`) {
		t.Errorf("with another --applyset: exit %d\nstderr %s", r.code, r.stderr)
	}
	if _, err := cms.Patch(ctx, "b", types.MergePatchType, []byte(`{"metadata":{"annotations":{"note":"keep me"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	r = kapply(t, "apply", "--plan", planFile, "-f", dir, "-n", ns, "--applyset=web")
	if r.code != 1 || !strings.Contains(r.stdout, "service/web created") || !strings.Contains(r.stderr, "ConfigMap/b -n "+ns+" changed since the plan: resourceVersion") {
		t.Errorf("prune of a changed object: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if _, err := cms.Get(ctx, "b", metav1.GetOptions{}); err != nil {
		t.Errorf("b, changed since the plan, was pruned: %v", err)
	}
	mustRunKapply(t, "plan", "-f", dir, "-n", ns, "--prune", "--applyset=web", "-o", planFile)
	// Without --applyset: the plan records its members on its own set.
	r = mustRunKapply(t, "apply", "--plan", planFile, "-f", dir, "-n", ns)
	if !strings.Contains(r.stdout, "configmap/b pruned") {
		t.Errorf("b not pruned:\n%s", r.stdout)
	}
	if err := os.Remove(filepath.Join(dir, "svc.yaml")); err != nil {
		t.Fatal(err)
	}
	r = mustRunKapply(t, "apply", "-f", dir, "-n", ns, "--prune", "--applyset=web")
	if !strings.Contains(r.stdout, "service/web pruned") {
		t.Errorf("the Service created by the plan is not a recorded member of the set:\n%s", r.stdout)
	}
}

// TestPlanWritesNoPartialPlan: an object that cannot be planned (a kind
// the server does not serve) fails the plan, naming it; no file is
// written, since executing the rest would silently skip it.
func TestPlanWritesNoPartialPlan(t *testing.T) {
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{
		"cm.yaml":   configMapYAML("cm", "k", "v"),
		"nope.yaml": "apiVersion: example.com/v1\nkind: Nope\nmetadata: {name: x}\n",
	})
	planFile := filepath.Join(t.TempDir(), "plan.json")
	r := kapply(t, "plan", "-f", dir, "-n", ns, "-o", planFile)
	if r.code != 1 || !strings.Contains(r.stderr, "nope.yaml") || !strings.Contains(r.stderr, "error: no plan was made") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(planFile); !os.IsNotExist(err) {
		t.Errorf("a plan file was written: %v", err)
	}
}

// TestReviewedApplyRefusesFlags: flags a reviewed run cannot honour are
// refused before anything is read or written.
func TestReviewedApplyRefusesFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--plan", "plan.json", "--dry-run=server"}, "--dry-run cannot be used with --plan"},
		{[]string{"--plan", "plan.json", "--server-side"}, "--server-side cannot be used with --plan"},
		{[]string{"-f", "x.yaml", "--confirm", "--force"}, "--force cannot be used with --confirm"},
		{[]string{"-f", "x.yaml", "--yes"}, "--yes needs --confirm"},
	} {
		r := kapply(t, append([]string{"apply"}, c.args...)...)
		if r.code != 1 || !strings.Contains(r.stderr, "error: "+c.want) {
			t.Errorf("%v: exit %d, stderr %s", c.args, r.code, r.stderr)
		}
	}
}

// TestApplyPlanSecretUpdate: a plan updating a Secret (stringData in the
// file) is applied with the files' value. A later plan whose Secret
// another writer changed since (data, which the plan's stringData would
// overwrite) is refused with a diff of masks; no value (applied, planned,
// the other writer's) is printed, in plain text or base64.
func TestApplyPlanSecretUpdate(t *testing.T) {
	ns := cluster.Namespace(t)
	secret := func(v string) string {
		return "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\nstringData: {password: " + v + "}\n"
	}
	password := func() string {
		t.Helper()
		live, err := dynamicClient(t).Resource(secrets).Namespace(ns).Get(context.Background(), "creds", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		v, _ := live.Object["data"].(map[string]any)["password"].(string)
		decoded, _ := base64.StdEncoding.DecodeString(v)
		return string(decoded)
	}
	dir := writeFiles(t, map[string]string{"secret.yaml": secret("first-value-1")})
	mustRunKapply(t, "apply", "-f", dir, "-n", ns)
	writeFile(t, dir, "secret.yaml", secret("planned-value-2"))
	planFile := filepath.Join(t.TempDir(), "plan.json")
	mustRunKapply(t, "plan", "-f", dir, "-n", ns, "-o", planFile)
	r := mustRunKapply(t, "apply", "--plan", planFile, "-f", dir, "-n", ns)
	if !strings.Contains(r.stdout, "secret/creds configured") || password() != "planned-value-2" {
		t.Fatalf("the planned update was not applied:\n%s", r.stdout)
	}
	writeFile(t, dir, "secret.yaml", secret("third-value-3"))
	mustRunKapply(t, "plan", "-f", dir, "-n", ns, "-o", planFile)
	other := base64.StdEncoding.EncodeToString([]byte("other-value-4"))
	if _, err := dynamicClient(t).Resource(secrets).Namespace(ns).Patch(context.Background(), "creds", types.MergePatchType,
		[]byte(`{"data":{"password":"`+other+`"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	r = kapply(t, "apply", "--plan", planFile, "-f", dir, "-n", ns)
	if r.code != 1 || !strings.Contains(r.stderr, "changed since the plan: data.password") || !strings.Contains(r.stderr, "-data.password: '*** (before)'\n+data.password: '*** (after)'") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	for _, v := range []string{"first-value-1", "planned-value-2", "third-value-3", "other-value-4"} {
		if out := r.stdout + r.stderr; strings.Contains(out, v) || strings.Contains(out, base64.StdEncoding.EncodeToString([]byte(v))) {
			t.Errorf("%s printed:\n%s", v, out)
		}
	}
	if got := password(); got != "other-value-4" {
		t.Errorf("the other writer's value was overwritten")
	}
}
