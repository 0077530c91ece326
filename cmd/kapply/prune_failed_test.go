package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapply/kapply/internal/testcluster"
)

var (
	secrets        = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	resourceQuotas = schema.GroupVersionResource{Version: "v1", Resource: "resourcequotas"}
	coreEvents     = schema.GroupVersionResource{Version: "v1", Resource: "events"}
)

// renameFiles are the two versions of a tree in which web-v1 is renamed
// web-v2 and the Secret old is dropped; v2's web-v2 has the given data.
func renameFiles(t *testing.T, webV2Data string) (v1, v2 string) {
	t.Helper()
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, labels: {app: shop}}\ndata: %s\n"
	v1 = writeFiles(t, map[string]string{
		"web.yaml":    fmt.Sprintf(cm, "web-v1", "{a: \"1\"}"),
		"other.yaml":  fmt.Sprintf(cm, "other", "{b: \"2\"}"),
		"secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: old, labels: {app: shop}}\nstringData: {k: v}\n",
	})
	v2 = writeFiles(t, map[string]string{
		"web.yaml":   fmt.Sprintf(cm, "web-v2", webV2Data),
		"other.yaml": fmt.Sprintf(cm, "other", "{b: \"2\"}"),
	})
	return v1, v2
}

func exists(t *testing.T, gvr schema.GroupVersionResource, ns, name string) bool {
	t.Helper()
	_, err := dynClient(t).Resource(gvr).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	return err == nil
}

func parentKinds(t *testing.T, ns, name string) string {
	t.Helper()
	return liveObject(t, secrets, ns, name).GetAnnotations()["applyset.kubernetes.io/contains-group-kinds"]
}

// TestPruneSkippedWhenAnApplyFails: v2 renames web-v1 to web-v2, whose data
// key the server rejects. The run prunes nothing (neither web-v1 nor the
// dropped Secret), says so on stderr and exits 1, as kubectl skips prune
// when an apply failed; the summary counts the one failed object (and not
// the refusal); the ApplySet parent keeps the superset (ConfigMap
// and Secret). Once v2 is fixed, the next run prunes both.
func TestPruneSkippedWhenAnApplyFails(t *testing.T) {
	testcluster.Require(t, cluster)
	for name, pruneFlags := range map[string][]string{
		"applyset": {"--prune", "--applyset=set1"},
		"selector": {"--prune", "-l", "app=shop"},
	} {
		t.Run(name, func(t *testing.T) {
			ns := cluster.Namespace(t)
			v1, v2 := renameFiles(t, `{"bad/key": "x"}`)
			args := func(dir string) []string { return append([]string{"apply", "-f", dir, "-n", ns}, pruneFlags...) }
			if r := kapply(t, args(v1)...); r.code != 0 {
				t.Fatalf("v1: exit %d\n%s", r.code, r.stderr)
			}
			r := kapply(t, args(v2)...)
			if r.code != exitFailed || strings.Contains(r.stdout, "pruned") ||
				!strings.Contains(r.stderr, "not pruning: 1 object(s) failed to apply") || !strings.Contains(r.stderr, "bad/key") {
				t.Errorf("v2 with a rejected object: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			// The summary counts objects: the refusal to prune is its own
			// error line, not a second failed object.
			if want := "0 created, 0 configured, 1 unchanged, 1 failed\n"; !strings.Contains(r.stderr, want) {
				t.Errorf("v2: the summary is not %q:\n%s", want, r.stderr)
			}
			if got := strings.Join(liveConfigMaps(t, ns), ","); got != "other,web-v1" || !exists(t, secrets, ns, "old") {
				t.Fatalf("after the failed run: configmaps %s, secret old kept: %v; want web-v1 and old kept", got, exists(t, secrets, ns, "old"))
			}
			if name == "applyset" {
				if kinds := parentKinds(t, ns, "set1"); kinds != "ConfigMap,Secret" {
					t.Errorf("parent after the failed run records %q, want the superset ConfigMap,Secret", kinds)
				}
			}
			writeFile(t, v2, "web.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web-v2, labels: {app: shop}}\ndata: {good-key: x}\n")
			r = kapply(t, args(v2)...)
			if r.code != 0 || !strings.Contains(r.stdout, "configmap/web-v1 pruned\n") || !strings.Contains(r.stdout, "secret/old pruned\n") {
				t.Errorf("fixed v2: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			if got := strings.Join(liveConfigMaps(t, ns), ","); got != "other,web-v2" {
				t.Errorf("after the fixed run: configmaps %s", got)
			}
			if name == "applyset" {
				if kinds := parentKinds(t, ns, "set1"); kinds != "ConfigMap" {
					t.Errorf("parent after the fixed run records %q, want ConfigMap", kinds)
				}
			}
		})
	}
}

// TestPruneSkippedWhenTheServerRejectsAnObject: admission (here a full
// quota) rejects web-v2; web-v1 is not pruned and the run exits 1.
func TestPruneSkippedWhenTheServerRejectsAnObject(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	v1, v2 := renameFiles(t, `{a: "1"}`)
	prune := []string{"--prune", "--applyset=set1"}
	if r := kapply(t, append([]string{"apply", "-f", v1, "-n", ns}, prune...)...); r.code != 0 {
		t.Fatalf("v1: exit %d\n%s", r.code, r.stderr)
	}
	// No controller computes usage here: the test writes the status, full.
	quotas := dynClient(t).Resource(resourceQuotas).Namespace(ns)
	quota := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ResourceQuota",
		"metadata": map[string]any{"name": "cms"}, "spec": map[string]any{"hard": map[string]any{"count/configmaps": "2"}}}}
	created, err := quotas.Create(context.Background(), quota, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Object["status"] = map[string]any{"hard": map[string]any{"count/configmaps": "2"}, "used": map[string]any{"count/configmaps": "2"}}
	if _, err := quotas.UpdateStatus(context.Background(), created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := kapply(t, append([]string{"apply", "-f", v2, "-n", ns}, prune...)...)
	if r.code != exitFailed || strings.Contains(r.stdout, "pruned") || !strings.Contains(r.stderr, "forbidden") ||
		!strings.Contains(r.stderr, "not pruning: 1 object(s) failed to apply") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if !exists(t, configMaps, ns, "web-v1") || !exists(t, secrets, ns, "old") {
		t.Errorf("web-v1 or the Secret old was pruned after web-v2 was rejected")
	}
	if kinds := parentKinds(t, ns, "set1"); kinds != "ConfigMap,Secret" {
		t.Errorf("parent records %q, want the superset ConfigMap,Secret", kinds)
	}
}

// TestPruneKeepsAnObjectServedUnderTwoGroups: an Event applied as v1, then
// as events.k8s.io/v1, is one object (one UID) listed under both groups;
// the run that applies it must not prune it as an undeclared core Event.
func TestPruneKeepsAnObjectServedUnderTwoGroups(t *testing.T) {
	testcluster.Require(t, cluster)
	for name, pruneFlags := range map[string][]string{
		"applyset": {"--prune", "--applyset=events"},
		"selector": {"--prune", "-l", "app=shop", "--prune-allowlist=core/v1/Event,events.k8s.io/v1/Event"},
	} {
		t.Run(name, func(t *testing.T) {
			ns := cluster.Namespace(t)
			dir := writeFiles(t, map[string]string{"event.yaml": fmt.Sprintf(`apiVersion: v1
kind: Event
metadata: {name: deployed, labels: {app: shop}}
involvedObject: {kind: ConfigMap, name: web, namespace: %s}
reason: Deployed
message: web deployed
type: Normal
`, ns)})
			args := append([]string{"apply", "-f", dir, "-n", ns}, pruneFlags...)
			if r := kapply(t, args...); r.code != 0 || r.stdout != "event/deployed created\n" {
				t.Fatalf("as v1: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			writeFile(t, dir, "event.yaml", fmt.Sprintf(`apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: deployed, labels: {app: shop, stage: two}}
regarding: {kind: ConfigMap, name: web, namespace: %s}
reason: Deployed
note: web deployed
type: Normal
`, ns))
			r := kapply(t, args...)
			if r.code != 0 || r.stdout != "event.events.k8s.io/deployed configured\n" {
				t.Errorf("as events.k8s.io/v1: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			if !exists(t, coreEvents, ns, "deployed") {
				t.Error("the run pruned the Event it had just applied")
			}
		})
	}
}

// TestPruneListFailureFailsTheRunNotAnObject: the LIST of candidates to
// prune is refused (a proxy answers it 403). Every object applied; the
// prune step's error is printed and the run exits 1, but the summary
// counts objects only: "5 unchanged, 0 failed".
func TestPruneListFailureFailsTheRunNotAnObject(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := fiveConfigMaps(t)
	args := []string{"apply", "-f", dir, "-n", ns, "--prune", "--applyset=shop"}
	if r := kapply(t, args...); r.code != 0 {
		t.Fatalf("first apply: exit %d\n%s", r.code, r.stderr)
	}
	proxy := cluster.StartProxy(t)
	proxy.SetRule(func(req *http.Request, _ int64) testcluster.Fault {
		if req.Method == http.MethodGet && strings.Contains(req.URL.Query().Get("labelSelector"), "applyset.kubernetes.io/part-of") {
			return testcluster.Fault{Status: http.StatusForbidden}
		}
		return testcluster.Pass
	})
	r := kapplyVia(t, proxy.Kubeconfig, args...)
	want := []string{"listing configmaps", "to prune", "injected by the test proxy: Forbidden"}
	if r.code != exitFailed || !errorLineHasAll(r.stderr, want) || !strings.Contains(r.stderr, "5 unchanged, 0 failed\n") || proxy.Count("status") == 0 {
		t.Errorf("exit %d, want 1, an error line with %q and the summary 5 unchanged, 0 failed\nstdout:\n%s\nstderr:\n%s", r.code, want, r.stdout, r.stderr)
	}
}
