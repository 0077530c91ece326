package apply_test

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapply/kapply/internal/testcluster"
)

// killedRun is 20 ConfigMaps applied with --applyset=set (revision 1),
// then 100 of a new version applied by the binary (writes slowed by a
// proxy) and killed with SIGKILL half-way: revision 2 begun, never
// completed.
type killedRun struct {
	f     *faultRun
	bin   string
	apply []string
}

func (k killedRun) cmd(kubeconfig string, args ...string) *exec.Cmd {
	return exec.Command(k.bin, append(args, "-n", k.f.ns, "--cache-dir", k.f.cacheDir, "--kubeconfig", kubeconfig)...)
}

// history is the revisions listed, as number:complete.
func (k killedRun) history(t *testing.T) string {
	t.Helper()
	out, err := k.cmd(cluster.Kubeconfig, "history", "--applyset=set").CombinedOutput()
	if err != nil {
		t.Fatalf("history: %v\n%s", err, out)
	}
	var complete []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n")[1:] {
		fields := strings.Fields(line)
		complete = append(complete, fields[0]+":"+fields[8]) // REVISION TIME USER MANAGER MEMBERS + ~ - COMPLETE CAUSE (a cause may hold spaces)
	}
	return strings.Join(complete, " ")
}

func killMidApply(t *testing.T) killedRun {
	requireCluster(t)
	k := killedRun{f: newFaultRun(t), bin: kapplyBinary(t)}
	f := k.f
	k.apply = []string{"apply", "-f", f.dir, "--prune", "--applyset=set"}
	f.write(t, "objects.yaml", manyConfigMaps(20, "1"))
	if out, err := k.cmd(cluster.Kubeconfig, k.apply...).CombinedOutput(); err != nil {
		t.Fatalf("first run: %v\n%s", err, out)
	}

	const n = 100
	f.write(t, "objects.yaml", manyConfigMaps(n, "2"))
	proxy := cluster.StartProxy(t)
	cmd := k.cmd(proxy.Kubeconfig, append(k.apply, "--parallel", "4")...)
	var mu sync.Mutex
	var process *os.Process
	writes := 0
	proxy.SetRule(func(req *http.Request, _ int64) testcluster.Fault {
		if req.Method == http.MethodGet {
			return testcluster.Pass
		}
		mu.Lock()
		defer mu.Unlock()
		if writes++; writes == n/2 {
			if err := process.Kill(); err != nil {
				t.Errorf("killing kapply: %v", err)
			}
		}
		return testcluster.Fault{Delay: 20 * time.Millisecond}
	})
	mu.Lock()
	err := cmd.Start()
	process = cmd.Process
	mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil {
		t.Fatal("the run ended before it was killed")
	}
	if got := k.history(t); got != "1:true 2:false" {
		t.Fatalf("after SIGKILL: revisions %s, want 1:true 2:false", got)
	}
	return k
}

// TestHistoryOfAKilledRun: SIGKILL in the middle of `kapply apply --prune
// --applyset` leaves revision 2 listed as incomplete beside revision 1,
// and readable; the same files applied again complete revision 2 rather
// than add a third.
func TestHistoryOfAKilledRun(t *testing.T) {
	k := killMidApply(t)
	if out, err := k.cmd(cluster.Kubeconfig, "history", "--applyset=set", "--revision", "2").CombinedOutput(); err != nil || !strings.Contains(string(out), `+  version: "2"`) {
		t.Fatalf("--revision 2: %v\n%.2000s", err, out)
	}
	if out, err := k.cmd(cluster.Kubeconfig, k.apply...).CombinedOutput(); err != nil {
		t.Fatalf("re-run: %v\n%s", err, out)
	}
	if got := k.history(t); got != "1:true 2:true" {
		t.Errorf("after the re-run: revisions %s, want 1:true 2:true", got)
	}
}

// TestRollbackAfterAKilledRun: after SIGKILL half-way through revision 2,
// kapply rollback (its default: the last complete revision, 1) brings the
// 20 ConfigMaps back to version 1 and prunes the others the killed run
// created; the rollback is revision 3, complete.
func TestRollbackAfterAKilledRun(t *testing.T) {
	k := killMidApply(t)
	if out, err := k.cmd(cluster.Kubeconfig, "rollback", "--applyset=set").CombinedOutput(); err != nil {
		t.Fatalf("rollback: %v\n%s", err, out)
	}
	list, err := dyn(t).Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(k.f.ns).List(context.Background(), metav1.ListOptions{LabelSelector: "applyset.kubernetes.io/part-of"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 20 {
		t.Errorf("%d members after the rollback, want revision 1's 20", len(list.Items))
	}
	for _, cm := range list.Items {
		if v := cm.Object["data"].(map[string]any)["version"]; v != "1" {
			t.Errorf("%s has version %v after the rollback, want 1", cm.GetName(), v)
		}
	}
	if got := k.history(t); got != "1:true 2:false 3:true" {
		t.Errorf("after the rollback: revisions %s, want 1:true 2:false 3:true", got)
	}
}
