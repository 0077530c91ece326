package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapply/kapply/internal/testcluster"
)

// labelledConfigMap is ConfigMap name with the given labels and data.
func labelledConfigMap(name, labels, data string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  labels: {%s}\ndata: {%s}\n", name, labels, data)
}

// managers lists the managedFields entries of a ConfigMap as
// "manager/operation", sorted.
func managers(t *testing.T, ns, name string) []string {
	t.Helper()
	live, err := dynClient(t).Resource(configMaps).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, entry := range live.GetManagedFields() {
		out = append(out, entry.Manager+"/"+string(entry.Operation))
	}
	slices.Sort(out)
	return out
}

func liveLabels(t *testing.T, ns, name string) string {
	t.Helper()
	live, err := dynClient(t).Resource(configMaps).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return metav1.FormatLabelSelector(&metav1.LabelSelector{MatchLabels: live.GetLabels()})
}

// TestFieldManagersAsKubectl: kapply apply records the same managers as
// kubectl apply, client-side (kubectl-client-side-apply, Update) and
// server-side (kubectl, Apply); --field-manager overrides both.
func TestFieldManagersAsKubectl(t *testing.T) {
	testcluster.Require(t, cluster)
	requireKubectl(t)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{
		"ours.yaml":   labelledConfigMap("ours", "a: one", "k: v"),
		"theirs.yaml": labelledConfigMap("theirs", "a: one", "k: v"),
	})
	ours, theirs := dir+"/ours.yaml", dir+"/theirs.yaml"
	for _, mode := range [][]string{nil, {"--server-side"}} {
		if r := kapply(t, append([]string{"apply", "-f", ours, "-n", ns}, mode...)...); r.code != 0 {
			t.Fatalf("kapply apply %v: exit %d\n%s", mode, r.code, r.stderr)
		}
		kubectl(t, append([]string{"apply", "-f", theirs, "-n", ns}, mode...)...)
		if got, want := managers(t, ns, "ours"), managers(t, ns, "theirs"); !slices.Equal(got, want) {
			t.Errorf("after apply %v: kapply's managers %v, kubectl's %v", mode, got, want)
		}
	}
	if got, want := managers(t, ns, "ours"), []string{"kubectl-last-applied/Apply", "kubectl/Apply"}; !slices.Equal(got, want) {
		t.Errorf("managers %v, want %v", got, want)
	}

	writeFile(t, dir, "ours.yaml", labelledConfigMap("ours", "a: two", "k: v"))
	if r := kapply(t, "apply", "-f", ours, "-n", ns, "--field-manager", "mine"); r.code != 0 {
		t.Fatalf("--field-manager: exit %d\n%s", r.code, r.stderr)
	}
	if got := managers(t, ns, "ours"); !slices.Contains(got, "mine/Update") {
		t.Errorf("--field-manager mine: managers %v", got)
	}
}

// TestKubectlServerSideAfterKapplyLeavesNoStuckField: an object applied by
// kapply, then by kubectl (client-side, changing only its data), then by
// kubectl apply --server-side with a label dropped: the label is deleted.
// With kapply's former manager name, the label stayed, owned by "kapply",
// which kubectl does not upgrade once kubectl-client-side-apply wrote the
// record last.
func TestKubectlServerSideAfterKapplyLeavesNoStuckField(t *testing.T) {
	testcluster.Require(t, cluster)
	requireKubectl(t)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"cm.yaml": labelledConfigMap("cm", "a: one, b: two", "k: v1")})
	mustApply(t, dir, ns, "configmap/cm created\n")
	writeFile(t, dir, "cm.yaml", labelledConfigMap("cm", "a: one, b: two", "k: v2"))
	kubectl(t, "apply", "-f", dir, "-n", ns)
	writeFile(t, dir, "cm.yaml", labelledConfigMap("cm", "a: one", "k: v2"))
	kubectl(t, "apply", "-f", dir, "-n", ns, "--server-side")
	if got := liveLabels(t, ns, "cm"); got != "a=one" {
		t.Errorf("labels after kubectl --server-side dropped b: %s, want a=one", got)
	}
}

// TestServerSideUpgradesEarlierKapply: an object applied by an earlier
// kapply (manager "kapply"), then by kubectl client-side (the record now
// kubectl-client-side-apply's), then by kapply --server-side with a label
// dropped: the label is deleted, and no client-side entry is left.
func TestServerSideUpgradesEarlierKapply(t *testing.T) {
	testcluster.Require(t, cluster)
	requireKubectl(t)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"cm.yaml": labelledConfigMap("cm", "a: one, b: two", "k: v1")})
	if r := kapply(t, "apply", "-f", dir, "-n", ns, "--field-manager", "kapply"); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	writeFile(t, dir, "cm.yaml", labelledConfigMap("cm", "a: one, b: two", "k: v2"))
	kubectl(t, "apply", "-f", dir, "-n", ns)
	if got := managers(t, ns, "cm"); !slices.Equal(got, []string{"kapply/Update", "kubectl-client-side-apply/Update"}) {
		t.Fatalf("managers before the switch: %v", got)
	}
	writeFile(t, dir, "cm.yaml", labelledConfigMap("cm", "a: one", "k: v2"))
	if r := kapply(t, "apply", "-f", dir, "-n", ns, "--server-side"); r.code != 0 || r.stdout != "configmap/cm serverside-applied\n" || !strings.Contains(r.stderr, "1 configured") {
		t.Fatalf("--server-side: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := liveLabels(t, ns, "cm"); got != "a=one" {
		t.Errorf("labels %s, want a=one", got)
	}
	if got := managers(t, ns, "cm"); !slices.Equal(got, []string{"kubectl-last-applied/Apply", "kubectl/Apply"}) {
		t.Errorf("managers after the switch: %v, want kubectl's two apply managers only", got)
	}
}

// TestRecordSurvivesKubectlServerSide: after kapply --server-side (on an
// object applied client-side, and on a new one), kubectl apply
// --server-side keeps the last-applied record up to date, as after its own,
// so a later client-side apply still deletes a label the file drops.
func TestRecordSurvivesKubectlServerSide(t *testing.T) {
	testcluster.Require(t, cluster)
	requireKubectl(t)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"cm.yaml": labelledConfigMap("switched", "a: one, b: two, c: three", "k: v1")})
	mustApply(t, dir, ns, "configmap/switched created\n")
	writeFile(t, dir, "new.yaml", labelledConfigMap("new", "a: one, b: two, c: three", "k: v1"))
	for step, run := range []func(){
		func() { kapply(t, "apply", "-f", dir, "-n", ns, "--server-side") },
		func() { kapply(t, "apply", "-f", dir, "-n", ns, "--server-side") },
		func() { kubectl(t, "apply", "-f", dir, "-n", ns, "--server-side") },
	} {
		run()
		for _, name := range []string{"switched", "new"} {
			if got := managers(t, ns, name); !slices.Equal(got, []string{"kubectl-last-applied/Apply", "kubectl/Apply"}) {
				t.Errorf("step %d: %s managers %v", step, name, got)
			}
		}
	}
	for _, name := range []string{"switched", "new"} {
		file := "cm.yaml"
		if name == "new" {
			file = "new.yaml"
		}
		writeFile(t, dir, file, labelledConfigMap(name, "a: one, b: two", "k: v2"))
	}
	kubectl(t, "apply", "-f", dir, "-n", ns, "--server-side")
	for _, name := range []string{"switched", "new"} {
		file := "cm.yaml"
		if name == "new" {
			file = "new.yaml"
		}
		writeFile(t, dir, file, labelledConfigMap(name, "a: one", "k: v2"))
	}
	if r := kapply(t, "apply", "-f", dir, "-n", ns); r.code != 0 {
		t.Fatalf("client-side: exit %d\n%s", r.code, r.stderr)
	}
	for _, name := range []string{"switched", "new"} {
		if got := liveLabels(t, ns, name); got != "a=one" {
			t.Errorf("%s: labels %s after client-side apply dropped b, want a=one", name, got)
		}
	}
}

// TestServerSideKeepsSecretRecordRedacted: under kubectl's manager the API
// server rewrites an object's record from each apply patch, values in
// clear; kapply --server-side of a Secret therefore sends no record and
// drops the redacted one client-side apply wrote, and says so when another
// manager (kubectl's kubectl-last-applied) keeps a record the server fills.
func TestServerSideKeepsSecretRecordRedacted(t *testing.T) {
	testcluster.Require(t, cluster)
	requireKubectl(t)
	ns := cluster.Namespace(t)
	const password = "hunter2-server-side"
	dir := writeFiles(t, map[string]string{"s.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {password: " + password + "}\n"})
	record := func() (string, bool) {
		live, err := dynClient(t).Resource(secrets).Namespace(ns).Get(context.Background(), "s", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		value, has := live.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"]
		return value, has
	}
	mustApply(t, dir, ns, "secret/s created\n")
	if r := kapply(t, "apply", "-f", dir, "-n", ns, "--server-side"); r.code != 0 {
		t.Fatalf("--server-side: exit %d\n%s", r.code, r.stderr)
	}
	if value, has := record(); has {
		t.Errorf("record after kapply --server-side: %s", value)
	}
	kubectl(t, "apply", "-f", dir, "-n", ns, "--server-side", "--force-conflicts")
	kubectl(t, "apply", "-f", dir, "-n", ns)
	kubectl(t, "apply", "-f", dir, "-n", ns, "--server-side")
	r := kapply(t, "apply", "-f", dir, "-n", ns, "--server-side")
	if r.code != 0 || !strings.Contains(r.stderr, "rewrote this Secret's last-applied record with its values in clear") || !strings.Contains(r.stderr, "kubectl-last-applied") {
		t.Errorf("after kubectl: exit %d\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, password) {
		t.Errorf("the warning shows the value:\n%s", r.stderr)
	}
}
