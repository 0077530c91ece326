package main

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kapply/kapply/internal/testcluster"
)

// TestApplyWaitForbiddenListEndsAtOnce: the wait's LIST of Deployments is
// refused (403) while the apply's requests pass. The run's retry rule does
// not retry a Forbidden answer, so the wait gives the Deployment up at once
// — not ready, Unknown, ListFailed with the server's message — and exits
// 1, instead of retrying until --timeout (20 s here).
func TestApplyWaitForbiddenListEndsAtOnce(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"web.yaml": waitDeployment("web")})
	proxy := cluster.StartProxy(t)
	var created atomic.Bool
	proxy.SetRule(func(req *http.Request, _ int64) testcluster.Fault {
		if !strings.HasSuffix(req.URL.Path, "/namespaces/"+ns+"/deployments") {
			return testcluster.Pass
		}
		switch {
		case req.Method == http.MethodPost:
			created.Store(true)
		case req.Method == http.MethodGet && created.Load():
			return testcluster.Fault{Status: http.StatusForbidden}
		}
		return testcluster.Pass
	})
	start := time.Now()
	r := kapplyVia(t, proxy.Kubeconfig, "apply", "-f", dir, "-n", ns, "--wait", "--timeout=20s")
	took := time.Since(start)
	t.Logf("exit %d after %s\nstdout:\n%s\nstderr:\n%s", r.code, took.Round(time.Millisecond), r.stdout, r.stderr)
	if r.code != exitFailed || took > 10*time.Second {
		t.Errorf("exit %d after %s, want 1 well before the 20s timeout", r.code, took.Round(time.Millisecond))
	}
	for _, want := range []string{
		"deployment.apps/web not ready after 20s (Unknown): ListFailed: ",
		"Forbidden",
		"wait: 0 ready, 0 failed, 1 not ready after 20s\n",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
}
