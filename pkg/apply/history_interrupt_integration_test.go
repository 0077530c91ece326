package apply_test

import (
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kapply/kapply/internal/testcluster"
)

// TestHistoryOfAKilledRun: SIGKILL in the middle of `kapply apply --prune
// --applyset` (the binary; writes slowed by a proxy) leaves revision 2
// listed as incomplete beside revision 1, and readable; the same files
// applied again complete revision 2 rather than add a third.
func TestHistoryOfAKilledRun(t *testing.T) {
	requireCluster(t)
	bin := kapplyBinary(t)
	f := newFaultRun(t)
	kapplyCmd := func(kubeconfig string, args ...string) *exec.Cmd {
		return exec.Command(bin, append(args, "-n", f.ns, "--cache-dir", f.cacheDir, "--kubeconfig", kubeconfig)...)
	}
	apply := []string{"apply", "-f", f.dir, "--prune", "--applyset=set"}
	f.write(t, "objects.yaml", manyConfigMaps(20, "1"))
	if out, err := kapplyCmd(cluster.Kubeconfig, apply...).CombinedOutput(); err != nil {
		t.Fatalf("first run: %v\n%s", err, out)
	}

	const n = 100
	f.write(t, "objects.yaml", manyConfigMaps(n, "2"))
	proxy := cluster.StartProxy(t)
	cmd := kapplyCmd(proxy.Kubeconfig, append(apply, "--parallel", "4")...)
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

	history := func() []string {
		t.Helper()
		out, err := kapplyCmd(cluster.Kubeconfig, "history", "--applyset=set").CombinedOutput()
		if err != nil {
			t.Fatalf("history: %v\n%s", err, out)
		}
		var complete []string
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n")[1:] {
			fields := strings.Fields(line)
			complete = append(complete, fields[0]+":"+fields[len(fields)-2])
		}
		return complete
	}
	if got := strings.Join(history(), " "); got != "1:true 2:false" {
		t.Fatalf("after SIGKILL: revisions %s, want 1:true 2:false", got)
	}
	if out, err := kapplyCmd(cluster.Kubeconfig, "history", "--applyset=set", "--revision", "2").CombinedOutput(); err != nil || !strings.Contains(string(out), `+  version: "2"`) {
		t.Fatalf("--revision 2: %v\n%.2000s", err, out)
	}
	if out, err := kapplyCmd(cluster.Kubeconfig, apply...).CombinedOutput(); err != nil {
		t.Fatalf("re-run: %v\n%s", err, out)
	}
	if got := strings.Join(history(), " "); got != "1:true 2:true" {
		t.Errorf("after the re-run: revisions %s, want 1:true 2:true", got)
	}
}
