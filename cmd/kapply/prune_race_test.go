package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kapply/kapply/internal/testcluster"
)

// kapplyVia runs the CLI in-process against the test cluster through
// another kubeconfig (a fault proxy's).
func kapplyVia(t *testing.T, kubeconfig string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: bytes.NewReader(nil), Out: &out, ErrOut: &errOut}
	code := exitCode(run(append(args, "--kubeconfig", kubeconfig), streams), &errOut)
	return result{stdout: out.String(), stderr: errOut.String(), code: code}
}

// TestPruneOfAnObjectAnotherClientDeletedFirst: between the LIST that
// finds cm3 to prune and its DELETE, another client deletes cm3 (a proxy
// deletes it just before passing the run's DELETE on, which then answers
// 404). The object is gone, as pruning wanted: "configmap/cm3 pruned",
// exit 0, and the parent records the new set. kubectl stops its prune at
// such a 404 (`configmaps "cm3" not found`) and exits 1.
func TestPruneOfAnObjectAnotherClientDeletedFirst(t *testing.T) {
	testcluster.Require(t, cluster)
	for name, pruneFlags := range map[string][]string{
		"applyset": {"--prune", "--applyset=shop"},
		"selector": {"--prune", "-l", "app=shop"},
	} {
		t.Run(name, func(t *testing.T) {
			ns := cluster.Namespace(t)
			dir := fiveConfigMaps(t)
			args := append([]string{"apply", "-f", dir, "-n", ns}, pruneFlags...)
			if r := kapply(t, args...); r.code != 0 {
				t.Fatalf("first apply: exit %d\n%s", r.code, r.stderr)
			}
			if err := os.Remove(filepath.Join(dir, "cm3.yaml")); err != nil {
				t.Fatal(err)
			}
			proxy := cluster.StartProxy(t)
			var deletedFirst sync.Once
			proxy.SetRule(func(req *http.Request, _ int64) testcluster.Fault {
				if req.Method == http.MethodDelete && strings.HasSuffix(req.URL.Path, "/configmaps/cm3") {
					deletedFirst.Do(func() {
						if err := dynClient(t).Resource(configMaps).Namespace(ns).Delete(context.Background(), "cm3", metav1.DeleteOptions{}); err != nil {
							t.Errorf("deleting cm3 as the other client: %v", err)
						}
					})
				}
				return testcluster.Pass
			})
			r := kapplyVia(t, proxy.Kubeconfig, args...)
			t.Logf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			if r.code != 0 || !strings.Contains(r.stdout, "configmap/cm3 pruned\n") || !strings.Contains(r.stderr, "4 unchanged, 1 pruned, 0 failed") {
				t.Errorf("exit %d, want 0 with cm3 pruned", r.code)
			}
			if proxy.Count("pass") == 0 || configMapExists(t, ns, "cm3") {
				t.Fatalf("the proxy saw no request, or cm3 is still there")
			}
			if name == "applyset" {
				if kinds := parentKinds(t, ns, "shop"); kinds != "ConfigMap" {
					t.Errorf("parent records %q, want ConfigMap", kinds)
				}
			}
		})
	}
}

// TestConcurrentPruneRunsOnOneApplySet: two runs at once on one ApplySet,
// both dropping the same four objects, race to delete them: each object is
// deleted by one run and found gone by the other. Both runs exit 0, and
// every dropped object is reported pruned by at least one of them. Three
// rounds, as the race may go either way.
func TestConcurrentPruneRunsOnOneApplySet(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := fiveConfigMaps(t)
	keep := filepath.Join(dir, "cm1.yaml")
	for round := range 3 {
		if r := kapply(t, "apply", "-f", dir, "-n", ns, "--prune", "--applyset=shop"); r.code != 0 {
			t.Fatalf("round %d, full apply: exit %d\n%s", round, r.code, r.stderr)
		}
		results := make([]result, 2)
		var wg sync.WaitGroup
		for i := range results {
			wg.Go(func() { results[i] = kapply(t, "apply", "-f", keep, "-n", ns, "--prune", "--applyset=shop") })
		}
		wg.Wait()
		both := results[0].stdout + results[1].stdout
		for i, r := range results {
			if r.code != 0 {
				t.Errorf("round %d, run %d: exit %d, want 0\nstdout:\n%s\nstderr:\n%s", round, i, r.code, r.stdout, r.stderr)
			}
		}
		for n := 2; n <= 5; n++ {
			if !strings.Contains(both, fmt.Sprintf("configmap/cm%d pruned\n", n)) {
				t.Errorf("round %d: neither run reports cm%d pruned:\n%s", round, n, both)
			}
		}
		if got := strings.Join(liveConfigMaps(t, ns), ","); got != "cm1" {
			t.Fatalf("round %d: live configmaps %s, want cm1", round, got)
		}
	}
}
