package main

import (
	"bytes"
	"net/http"
	"strings"
	"sync"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kapply/kapply/internal/testcluster"
)

// TestOwnershipCommandsRetryAnUnavailableServer: status, adopt,
// last-applied set and release read and write through apply's clients and
// its retry rule: a 503 without Retry-After (which client-go does not
// retry) on the first read and the first write of the object is retried,
// and each command prints what it prints against a healthy server.
func TestOwnershipCommandsRetryAnUnavailableServer(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"web.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {mode: fast, size: big}\n"})
	kubectl(t, "create", "configmap", "web", "-n", ns, "--from-literal=mode=fast")
	proxy := cluster.StartProxy(t)
	var mu sync.Mutex
	refused := map[string]bool{}
	proxy.SetRule(func(req *http.Request, _ int64) testcluster.Fault {
		if !strings.HasSuffix(req.URL.Path, "/configmaps/web") {
			return testcluster.Pass
		}
		mu.Lock()
		defer mu.Unlock()
		if refused[req.Method] {
			return testcluster.Pass
		}
		refused[req.Method] = true
		return testcluster.Fault{Status: http.StatusServiceUnavailable}
	})
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"status", "-f", dir}, exitDrift, "configmap/web: no last-applied record"},
		{[]string{"adopt", "-f", dir}, exitOK, "configmap/web adopted\n  the next apply changes:\n    data.size: (none) -> \"big\""},
		{[]string{"last-applied", "set", "-f", dir}, exitOK, "configmap/web configured"},
		{[]string{"release", "-f", dir, "--field", "data.size"}, exitOK, "configmap/web released data.size"},
	} {
		mu.Lock()
		clear(refused)
		mu.Unlock()
		var out, errOut bytes.Buffer
		streams := genericiooptions.IOStreams{In: bytes.NewReader(nil), Out: &out, ErrOut: &errOut}
		code := exitCode(run(append(c.args, "-n", ns, "--kubeconfig", proxy.Kubeconfig), streams), &errOut)
		if code != c.code || !strings.Contains(out.String(), c.want) {
			t.Errorf("%v: exit %d, want %d and %q:\n%s%s", c.args, code, c.code, c.want, out.String(), errOut.String())
		}
		mu.Lock()
		if !refused[http.MethodGet] {
			t.Errorf("%v: the proxy saw no read of configmap/web", c.args)
		}
		mu.Unlock()
	}
}
