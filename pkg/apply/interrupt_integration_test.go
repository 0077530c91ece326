package apply_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapply/kapply/internal/testcluster"
)

var (
	roles   = k8sschema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}
	secrets = k8sschema.GroupVersionResource{Version: "v1", Resource: "secrets"}
)

// configMapsAndRoles is n ConfigMaps and n Roles, all holding version.
func configMapsAndRoles(n int, version string) string {
	var b strings.Builder
	b.WriteString(manyConfigMaps(n, version))
	for i := range n {
		fmt.Fprintf(&b, "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: r-%d}\n"+
			"rules: [{apiGroups: [\"\"], resources: [configmaps], resourceNames: [%q], verbs: [get]}]\n", i, "v"+version)
	}
	return b.String()
}

// TestInterruptedRunLosesNothing: SIGINT in the middle of `kapply apply
// --prune --applyset` (the binary; writes slowed by a proxy), in a run that
// adds a kind (Role) to the set. kapply exits
// non-zero at once; every live object's record matches the object; the
// ApplySet parent lists every kind of its members (it went first); and a
// re-run applies the rest, after which nothing changes.
func TestInterruptedRunLosesNothing(t *testing.T) {
	requireCluster(t)
	bin := kapplyBinary(t)
	f := newFaultRun(t)
	kapplyCmd := func(kubeconfig string, args ...string) *exec.Cmd {
		args = append([]string{"apply", "-f", f.dir, "-n", f.ns, "--prune", "--applyset=set", "--cache-dir", f.cacheDir, "--kubeconfig", kubeconfig}, args...)
		return exec.Command(bin, args...)
	}
	// A first complete run: the set holds ConfigMaps only.
	f.write(t, "objects.yaml", manyConfigMaps(20, "1"))
	if out, err := kapplyCmd(cluster.Kubeconfig).CombinedOutput(); err != nil {
		t.Fatalf("first run: %v\n%s", err, out)
	}

	// The interrupted run adds Roles and changes every object.
	const n = 150
	f.write(t, "objects.yaml", configMapsAndRoles(n, "2"))
	proxy := cluster.StartProxy(t)
	cmd := kapplyCmd(proxy.Kubeconfig, "--parallel", "4")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	var mu sync.Mutex
	var signalled time.Time
	var process *os.Process
	writesSeen := 0
	proxy.SetRule(func(req *http.Request, _ int64) testcluster.Fault {
		if req.Method == http.MethodGet {
			return testcluster.Pass
		}
		mu.Lock()
		defer mu.Unlock()
		if writesSeen++; writesSeen == n/2 {
			signalled = time.Now()
			if err := process.Signal(os.Interrupt); err != nil {
				t.Errorf("interrupting kapply: %v", err)
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
	err = cmd.Wait()
	exited := time.Now()
	mu.Lock()
	sinceSignal := exited.Sub(signalled)
	mu.Unlock()
	if signalled.IsZero() {
		t.Fatalf("the run ended before it was interrupted: %v\n%s", err, stderr.String())
	}
	code := cmd.ProcessState.ExitCode()
	t.Logf("exit %d, %s after SIGINT; %d writes reached the proxy; stderr ends: %s", code, sinceSignal.Round(time.Millisecond),
		writesSeen, lastLines(stderr.String(), 2))
	// Exit 1 with the summary: kapply stopped itself and reported every
	// object (a process killed by the signal has no exit code).
	if code != 1 || !strings.Contains(stderr.String(), " failed\n") {
		t.Errorf("exit %d after SIGINT, want 1 and a summary:\n%s", code, lastLines(stderr.String(), 5))
	}
	if sinceSignal > 3*time.Second {
		t.Errorf("kapply took %s to exit after SIGINT", sinceSignal)
	}
	if strings.Contains(stderr.String(), "pruned") && !strings.Contains(stderr.String(), "0 pruned") {
		t.Errorf("an interrupted run pruned:\n%s", stderr.String())
	}

	checked := recordsMatchLive(t, f.ns) + recordFieldMatchesLive(t, roles, f.ns, "rules")
	t.Logf("%d live objects with a record checked against it", checked)
	parentIsSuperset(t, f.ns, "set")

	// The re-run applies what is left; the one after it changes nothing.
	if out, err := kapplyCmd(cluster.Kubeconfig).CombinedOutput(); err != nil {
		t.Fatalf("re-run: %v\n%s", err, out)
	}
	out, err := kapplyCmd(cluster.Kubeconfig).Output()
	if err != nil {
		t.Fatalf("second re-run: %v", err)
	}
	if lines := strings.Count(string(out), " unchanged\n"); lines != 2*n {
		t.Errorf("second re-run: %d unchanged lines, want %d:\n%s", lines, 2*n, out)
	}
	if got := recordsMatchLive(t, f.ns) + recordFieldMatchesLive(t, roles, f.ns, "rules"); got != 2*n {
		t.Errorf("%d objects with a record after the re-run, want %d", got, 2*n)
	}
}

// parentIsSuperset checks that the ApplySet parent lists the kind of every
// live member.
func parentIsSuperset(t *testing.T, ns, name string) {
	t.Helper()
	parent, err := dyn(t).Resource(secrets).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kinds := strings.Split(parent.GetAnnotations()["applyset.kubernetes.io/contains-group-kinds"], ",")
	id := parent.GetLabels()["applyset.kubernetes.io/id"]
	selector := metav1.ListOptions{LabelSelector: "applyset.kubernetes.io/part-of=" + id}
	for kind, gvr := range map[string]k8sschema.GroupVersionResource{"ConfigMap": configMaps, "Role.rbac.authorization.k8s.io": roles} {
		members, err := dyn(t).Resource(gvr).Namespace(ns).List(context.Background(), selector)
		if err != nil {
			t.Fatal(err)
		}
		if len(members.Items) > 0 && !slices.Contains(kinds, kind) {
			t.Errorf("%d %s members, but the parent lists only %v", len(members.Items), kind, kinds)
		}
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], " | ")
}
