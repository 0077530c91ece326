package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapply/kapply/internal/fixture"
	"github.com/kapply/kapply/internal/testcluster"
	"github.com/kapply/kapply/pkg/history"
)

var historySecrets = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// historyObjects are the objects holding the revisions of the Secret
// ApplySet parent in ns.
func historyObjects(t *testing.T, gvr schema.GroupVersionResource, ns, parent string) []unstructured.Unstructured {
	t.Helper()
	ctx := context.Background()
	p, err := dynClient(t).Resource(gvr).Namespace(ns).Get(ctx, parent, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	id := p.GetLabels()["applyset.kubernetes.io/id"]
	list, err := dynClient(t).Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: history.HistoryOfLabel + "=" + id})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func mustKapply(t *testing.T, args ...string) result {
	t.Helper()
	r := kapply(t, args...)
	if r.code != 0 {
		t.Fatalf("kapply %s: exit %d\n%s\n%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

// TestHistoryListsRevisionsAndShowsWhatOneChanged: v1, then v2 (a field
// changed, an object added, one removed) make two complete revisions with
// their causes; applying v2 again makes none, nor does a dry run;
// --revision 2 is the diff of the members' configurations; the history
// Secrets name the parent as owner and carry no ApplySet label.
func TestHistoryListsRevisionsAndShowsWhatOneChanged(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{
		"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: one}\n",
		"b.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata: {k: b}\n",
	})
	apply := []string{"apply", "-f", dir, "-n", ns, "--prune", "--applyset=web"}
	mustKapply(t, append(apply, "--change-cause", "first")...)
	if err := os.Remove(filepath.Join(dir, "b.yaml")); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: two}\n",
		"c.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {k: c}\n"}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mustKapply(t, append(apply, "--change-cause", "second")...)
	mustKapply(t, append(apply, "--change-cause", "nothing changed")...)
	if err := os.WriteFile(filepath.Join(dir, "c.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {k: dry}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustKapply(t, append(apply, "--dry-run=server", "--change-cause", "a dry run")...)
	mustKapply(t, append(apply, "--dry-run=client", "--change-cause", "a dry run")...)

	list := mustKapply(t, "history", "--applyset=web", "-n", ns).stdout
	lines := strings.Split(strings.TrimSpace(list), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "1 ") || !strings.HasPrefix(lines[2], "2 ") {
		t.Fatalf("want a header and revisions 1, 2:\n%s", list)
	}
	for i, want := range []string{`admin kubectl-client-side-apply 2 2 0 0 true "first"`, `admin kubectl-client-side-apply 2 1 1 1 true "second"`} {
		if got := strings.Join(strings.Fields(lines[i+1])[2:], " "); got != want {
			t.Errorf("revision %d: want %q in\n%s", i+1, want, lines[i+1])
		}
	}
	if strings.Contains(list, "nothing changed") || strings.Contains(list, "a dry run") {
		t.Errorf("a revision of an apply that changed nothing, or of a dry run:\n%s", list)
	}

	d := mustKapply(t, "history", "--applyset=web", "-n", ns, "--revision", "2").stdout
	for _, want := range []string{"-  k: one", "+  k: two", "--- revision 1 /ConfigMap " + ns + "/b", "+++ revision 2 /ConfigMap " + ns + "/c", "-  k: b", "+  k: c",
		"+    applyset.kubernetes.io/part-of: applyset-"} {
		if !strings.Contains(d, want) {
			t.Errorf("--revision 2 lacks %q:\n%s", want, d)
		}
	}

	parent, err := dynClient(t).Resource(historySecrets).Namespace(ns).Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	objs := historyObjects(t, historySecrets, ns, "web")
	if len(objs) != 2 {
		t.Fatalf("%d history objects, want 2", len(objs))
	}
	for _, o := range objs {
		refs := o.GetOwnerReferences()
		if len(refs) != 1 || refs[0].UID != parent.GetUID() || refs[0].Kind != "Secret" || refs[0].Name != "web" {
			t.Errorf("%s: ownerReferences %v, want the parent (uid %s)", o.GetName(), refs, parent.GetUID())
		}
		for k := range o.GetLabels() {
			if strings.HasPrefix(k, "applyset.kubernetes.io/") {
				t.Errorf("%s carries ApplySet label %s", o.GetName(), k)
			}
		}
	}
}

// TestHistoryHoldsNoSecretValue: a Secret member's values are in no stored
// revision, read raw: as stored, base64-decoded and gunzipped; its keys are.
func TestHistoryHoldsNoSecretValue(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	const value = "hunter2-is-the-password"
	encoded := base64.StdEncoding.EncodeToString([]byte(value))
	dir := writeFiles(t, map[string]string{"s.yaml": fmt.Sprintf(
		"apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\ndata: {password: %s}\nstringData: {token: %s-token}\n", encoded, value)})
	mustKapply(t, "apply", "-f", dir, "-n", ns, "--prune", "--applyset=sec")
	objs := historyObjects(t, historySecrets, ns, "sec")
	if len(objs) != 1 {
		t.Fatalf("%d history objects, want 1", len(objs))
	}
	raw, err := json.Marshal(objs[0].Object)
	if err != nil {
		t.Fatal(err)
	}
	packed, err := base64.StdEncoding.DecodeString(objs[0].Object["data"].(map[string]any)["revision.json.gz"].(string))
	if err != nil {
		t.Fatal(err)
	}
	z, err := gzip.NewReader(bytes.NewReader(packed))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{string(raw), string(packed), string(plain)} {
		for _, form := range []string{value, encoded, base64.StdEncoding.EncodeToString([]byte(value + "-token"))} {
			if strings.Contains(text, form) {
				t.Fatalf("a stored revision holds the Secret's value (%q)", form)
			}
		}
	}
	if !strings.Contains(string(plain), `"password":"`+history.Removed+`"`) || !strings.Contains(string(plain), `"token":"`+history.Removed+`"`) {
		t.Errorf("the keys are not kept: %s", plain)
	}
}

// TestHistoryBoundedByTheLimit: with --history-limit 2, four changing
// applies keep revisions 3 and 4; --history-limit 0 records none, deletes
// those, and says so.
func TestHistoryBoundedByTheLimit(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	for i := 1; i <= 4; i++ {
		dir := writeFiles(t, map[string]string{"a.yaml": fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {v: \"%d\"}\n", i)})
		mustKapply(t, "apply", "-f", dir, "-n", ns, "--prune", "--applyset=lim", "--history-limit", "2")
	}
	revs, err := history.Revisions(historyObjects(t, historySecrets, ns, "lim"))
	if err != nil {
		t.Fatal(err)
	}
	if len(revs) != 2 || revs[0].Number != 3 || revs[1].Number != 4 {
		t.Fatalf("kept %+v, want revisions 3 and 4", revs)
	}
	dir := writeFiles(t, map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {v: \"5\"}\n"})
	r := mustKapply(t, "apply", "-f", dir, "-n", ns, "--prune", "--applyset=lim", "--history-limit", "0")
	if !strings.Contains(r.stderr, "Warning: --history-limit=0: no revision of ApplySet secret/lim is kept (2 deleted)") {
		t.Errorf("no warning:\n%s", r.stderr)
	}
	if objs := historyObjects(t, historySecrets, ns, "lim"); len(objs) != 0 {
		t.Errorf("%d history objects left with --history-limit 0", len(objs))
	}
}

// TestHistorySplitsARevisionOverOneMiB: ConfigMaps of random values make a
// revision of more than 1 MiB compressed: stored in chunks, each within
// the server's limit, read back whole by kapply history --revision.
func TestHistorySplitsARevisionOverOneMiB(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	files := map[string]string{}
	for i := range 3 {
		noise := make([]byte, 500_000)
		if _, err := rand.Read(noise); err != nil {
			t.Fatal(err)
		}
		files[fmt.Sprintf("big%d.yaml", i)] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big%d}\ndata: {noise: %s}\n", i, base64.StdEncoding.EncodeToString(noise))
	}
	mustKapply(t, "apply", "-f", writeFiles(t, files), "-n", ns, "--prune", "--applyset=configmaps/bigset")
	configMapsGVR := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	objs := historyObjects(t, configMapsGVR, ns, "bigset")
	if len(objs) < 2 {
		t.Fatalf("%d history objects, want the revision in ≥ 2 chunks", len(objs))
	}
	for _, o := range objs {
		if !strings.HasPrefix(o.GetName(), "bigset-rev-1-") || o.GetKind() != "ConfigMap" {
			t.Errorf("history object %s %s", o.GetKind(), o.GetName())
		}
	}
	d := mustKapply(t, "history", "--applyset=configmaps/bigset", "-n", ns, "--revision", "1").stdout
	for i := range 3 {
		if !strings.Contains(d, fmt.Sprintf("+++ revision 1 /ConfigMap %s/big%d", ns, i)) {
			t.Errorf("revision 1 read back without big%d", i)
		}
	}
}

// TestKubectlPruneLeavesHistoryAlone: kubectl apply --prune --applyset on
// a set kapply recorded revisions of deletes a dropped member, never a
// revision.
func TestKubectlPruneLeavesHistoryAlone(t *testing.T) {
	testcluster.Require(t, cluster)
	t.Setenv("KUBECTL_APPLYSET", "true")
	ns := cluster.Namespace(t)
	dir := fiveConfigMaps(t)
	args := []string{"apply", "-f", dir, "-n", ns, "--prune", "--applyset=shared"}
	mustKapply(t, args...)
	if err := os.Remove(filepath.Join(dir, "cm2.yaml")); err != nil {
		t.Fatal(err)
	}
	mustKapply(t, args...)
	if err := os.Remove(filepath.Join(dir, "cm3.yaml")); err != nil {
		t.Fatal(err)
	}
	if out := kubectl(t, args...); !strings.Contains(out, "configmap/cm3 pruned") {
		t.Fatalf("kubectl did not prune cm3:\n%s", out)
	}
	if objs := historyObjects(t, historySecrets, ns, "shared"); len(objs) != 2 {
		t.Fatalf("%d history objects after kubectl's prune, want 2", len(objs))
	}
}

// TestHistoryReadByAUserWhoMayOnlyReadSecrets: the revisions of a Secret
// parent are read with get and list on Secrets, nothing else.
func TestHistoryReadByAUserWhoMayOnlyReadSecrets(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v}\n"})
	mustKapply(t, "apply", "-f", dir, "-n", ns, "--prune", "--applyset=web", "--change-cause", "by admin")
	reader := cluster.UserKubeconfig(t, ns, "history-reader", []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list"}}})
	r := kapplyVia(t, reader, "history", "--applyset=web", "-n", ns)
	if r.code != 0 || !strings.Contains(r.stdout, `"by admin"`) {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := kapplyVia(t, reader, "history", "--applyset=web", "-n", ns, "--revision", "1"); r.code != 0 || !strings.Contains(r.stdout, "+  k: v") {
		t.Fatalf("--revision 1: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestHistoryOfAnExecutedPlan: apply --plan records a revision of the
// plan's ApplySet, complete once the plan is executed, with the files'
// configurations and --change-cause.
func TestHistoryOfAnExecutedPlan(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: one}\n"})
	mustKapply(t, "apply", "-f", dir, "-n", ns, "--prune", "--applyset=web")
	if err := os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: two}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	planFile := filepath.Join(t.TempDir(), "plan.json")
	mustKapply(t, "plan", "-f", dir, "-n", ns, "--prune", "--applyset=web", "-o", planFile)
	mustKapply(t, "apply", "--plan", planFile, "-f", dir, "-n", ns, "--change-cause", "planned")
	revs, err := history.Revisions(historyObjects(t, historySecrets, ns, "web"))
	if err != nil {
		t.Fatal(err)
	}
	if len(revs) != 2 || !revs[1].Complete || revs[1].ChangeCause != "planned" || revs[1].Counts != (history.Counts{Members: 1, Changed: 1}) {
		t.Fatalf("revisions %+v", revs)
	}
	d := mustKapply(t, "history", "--applyset=web", "-n", ns, "--revision", "2").stdout
	if !strings.Contains(d, "-  k: one") || !strings.Contains(d, "+  k: two") || strings.Contains(d, "part-of") {
		t.Errorf("--revision 2 (the label is in both, so no change):\n%s", d)
	}
}

// TestHistoryRevisionOfAFailedApplyIsIncomplete: a member the server
// refuses leaves the revision incomplete; the same files applied again,
// once they succeed, complete it rather than add one.
func TestHistoryRevisionOfAFailedApplyIsIncomplete(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{
		"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v}\n",
		"q.yaml": "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\nspec: {hard: {pods: \"2\"}}\n",
	})
	// A user who may write Secrets and ConfigMaps, not ResourceQuotas:
	// the quota fails, the ConfigMap is applied.
	writer := cluster.UserKubeconfig(t, ns, "history-writer", []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"secrets", "configmaps"}, Verbs: []string{"get", "list", "create", "patch", "update", "delete"}},
		{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"selfsubjectreviews"}, Verbs: []string{"create"}}})
	args := []string{"apply", "-f", dir, "-n", ns, "--prune", "--applyset=web"}
	if r := kapplyVia(t, writer, args...); r.code == 0 {
		t.Fatalf("the quota was applied by a user who may not:\n%s", r.stdout)
	}
	revs, err := history.Revisions(historyObjects(t, historySecrets, ns, "web"))
	if err != nil {
		t.Fatal(err)
	}
	if len(revs) != 1 || revs[0].Complete || revs[0].User != "history-writer" {
		t.Fatalf("after a failed apply: %+v", revs)
	}
	mustKapply(t, args...)
	revs, err = history.Revisions(historyObjects(t, historySecrets, ns, "web"))
	if err != nil {
		t.Fatal(err)
	}
	if len(revs) != 1 || !revs[0].Complete {
		t.Fatalf("after the same files succeeded: %+v", revs)
	}
	if list := mustKapply(t, "history", "--applyset=web", "-n", ns).stdout; !strings.Contains(list, "true") {
		t.Errorf("listed as incomplete:\n%s", list)
	}
}

// TestHistoryOfACustomTypeParent: a Widget parent's revisions need
// --history-namespace: without it the run is refused naming the flag and
// writes neither the parent nor a member; with the parent's namespace they
// are Secrets there, owned by the Widget.
func TestHistoryOfACustomTypeParent(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	group := "history.kapply.test"
	crd := strings.Replace(fixture.WidgetCRD(group), "metadata: {name: widgets.", `metadata: {labels: {applyset.kubernetes.io/is-parent-type: "true"}, name: widgets.`, 1)
	mustKapply(t, "apply", "-f", writeFiles(t, map[string]string{"crd.yaml": crd}), "--wait") // established and served before the set names it
	dir := writeFiles(t, map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v}\n"})
	args := []string{"apply", "-f", dir, "-n", ns, "--prune", "--applyset=widgets." + group + "/wset"}
	r := kapply(t, args...)
	if r.code == 0 || !strings.Contains(r.stdout+r.stderr, "--history-namespace") {
		t.Fatalf("without --history-namespace: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	widgets := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}
	if _, err := dynClient(t).Resource(widgets).Namespace(ns).Get(context.Background(), "wset", metav1.GetOptions{}); err == nil {
		t.Error("the parent was written by a refused run")
	}
	if got := liveConfigMaps(t, ns); len(got) != 0 {
		t.Errorf("a refused run wrote %v", got)
	}
	if r := kapply(t, append(args, "--history-namespace", "default")...); r.code == 0 || !strings.Contains(r.stderr, `--history-namespace must be "`+ns+`"`) {
		t.Errorf("another namespace than the parent's: exit %d\n%s", r.code, r.stderr)
	}
	mustKapply(t, append(args, "--history-namespace", ns)...)
	parent, err := dynClient(t).Resource(widgets).Namespace(ns).Get(context.Background(), "wset", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	list, err := dynClient(t).Resource(historySecrets).Namespace(ns).List(context.Background(), metav1.ListOptions{LabelSelector: history.HistoryOfLabel})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].GetOwnerReferences()[0].UID != parent.GetUID() || list.Items[0].GetOwnerReferences()[0].Kind != "Widget" {
		t.Fatalf("history Secrets %v", list.Items)
	}
	out := mustKapply(t, "history", "--applyset=widgets."+group+"/wset", "-n", ns, "--history-namespace", ns).stdout
	if !strings.Contains(out, "\n1 ") {
		t.Errorf("history:\n%s", out)
	}
}

// TestHistoryRecordsWhomTheServerAuthenticated: the revision's user is the
// server's (SelfSubjectReview), here an impersonated one, not the
// kubeconfig's; a revision not kept is an error naming those kept.
func TestHistoryRecordsWhomTheServerAuthenticated(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v}\n"})
	mustKapply(t, "apply", "-f", dir, "-n", ns, "--prune", "--applyset=web", "--as=alice", "--as-group=system:masters")
	revs, err := history.Revisions(historyObjects(t, historySecrets, ns, "web"))
	if err != nil {
		t.Fatal(err)
	}
	if len(revs) != 1 || revs[0].User != "alice" {
		t.Fatalf("revisions %+v, want one by alice", revs)
	}
	r := kapply(t, "history", "--applyset=web", "-n", ns, "--revision", "7")
	if r.code != 2 || !strings.Contains(r.stderr, "revision 7 not found (kept: 1 to 1)") {
		t.Errorf("--revision 7: exit %d\n%s", r.code, r.stderr)
	}
}

// TestHistoryOfConcurrentRuns: two runs of different files at once on one
// set record two revisions of distinct numbers, each read back whole.
func TestHistoryOfConcurrentRuns(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	mustKapply(t, "apply", "-f", fiveConfigMaps(t), "-n", ns, "--prune", "--applyset=shop")
	dirs := []string{
		writeFiles(t, map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm1}\ndata: {i: one}\n"}),
		writeFiles(t, map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm1}\ndata: {i: uno}\n"}),
	}
	var wg sync.WaitGroup
	results := make([]result, 2)
	for i, dir := range dirs {
		wg.Go(func() { results[i] = kapply(t, "apply", "-f", dir, "-n", ns, "--prune", "--applyset=shop") })
	}
	wg.Wait()
	for i, r := range results {
		if r.code != 0 {
			t.Fatalf("run %d: exit %d\n%s", i, r.code, r.stderr)
		}
	}
	objs := historyObjects(t, historySecrets, ns, "shop")
	revs, err := history.Revisions(objs)
	if err != nil {
		t.Fatal(err)
	}
	if len(revs) != 3 || revs[1].Number != 2 || revs[2].Number != 3 {
		t.Fatalf("revisions %+v, want 1, 2, 3", revs)
	}
	for _, rev := range revs {
		if _, err := history.Members(objs, rev.Number); err != nil {
			t.Errorf("revision %d: %v", rev.Number, err)
		}
	}
}
