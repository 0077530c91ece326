package main

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kapply/kapply/internal/testcluster"
)

// TestApplyGivesUpWithinTheRequestTimeout: a proxy answers every write
// with 429 and Retry-After: 1, forever. With --request-timeout=2s, the
// retry window is 2 s: kapply exits 1 within it (plus one attempt), each
// object's error saying it gave up after the server's 429s.
func TestApplyGivesUpWithinTheRequestTimeout(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{
		"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
		"b.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n",
	})
	proxy := cluster.StartProxy(t)
	proxy.SetRule(func(req *http.Request, _ int64) testcluster.Fault {
		if req.Method != http.MethodGet {
			return testcluster.Fault{Status: http.StatusTooManyRequests, RetryAfter: 1}
		}
		return testcluster.Pass
	})
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: bytes.NewReader(nil), Out: &out, ErrOut: &errOut}
	start := time.Now()
	code := exitCode(run([]string{"apply", "-f", dir, "-n", ns, "--kubeconfig", proxy.Kubeconfig, "--request-timeout=2s"}, streams), &errOut)
	took := time.Since(start)
	t.Logf("exit %d after %s:\n%s", code, took.Round(time.Millisecond), errOut.String())
	if code != exitFailed {
		t.Errorf("exit %d, want %d", code, exitFailed)
	}
	if took > 4*time.Second {
		t.Errorf("took %s with --request-timeout=2s", took)
	}
	for _, name := range []string{"configmap/a", "configmap/b"} {
		if !errorLineHasAll(errOut.String(), []string{name, "the last answered 429 Too Many Requests", "kapply retries for at most 2s"}) {
			t.Errorf("no error line for %s saying kapply gave up after 429s", name)
		}
	}
}
