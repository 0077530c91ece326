package main

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kapply/kapply/internal/testcluster"
)

// TestNoOpRunUsesKubectlsCaches: kapply asks each run's discovery and
// OpenAPI answers anew, but a process is one run, and a no-op run with a
// warm --cache-dir sends what it did when the answers were kept for the
// process: no discovery request (the disk cache), one OpenAPI listing and
// no OpenAPI document (the HTTP cache, keyed by the server's hash), one
// GET per object (a LIST where that saves requests), and the reachability check.
func TestNoOpRunUsesKubectlsCaches(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	var manifest strings.Builder
	for i := range 3 {
		fmt.Fprintf(&manifest, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d}\ndata: {a: b}\n", i)
	}
	manifest.WriteString("---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  selector: {matchLabels: {app: d}}\n" +
		"  template:\n    metadata: {labels: {app: d}}\n    spec:\n      containers: [{name: c, image: nginx}]\n")
	dir := writeFiles(t, map[string]string{"all.yaml": manifest.String()})
	cacheDir := t.TempDir()
	proxy := cluster.StartProxy(t)
	var mu sync.Mutex
	var requests []string
	proxy.SetRule(func(req *http.Request, _ int64) testcluster.Fault {
		mu.Lock()
		requests = append(requests, req.Method+" "+req.URL.Path)
		mu.Unlock()
		return testcluster.Pass
	})
	apply := func() {
		var out, errOut bytes.Buffer
		streams := genericiooptions.IOStreams{In: bytes.NewReader(nil), Out: &out, ErrOut: &errOut}
		args := []string{"apply", "-f", dir, "-n", ns, "--kubeconfig", proxy.Kubeconfig, "--cache-dir", cacheDir}
		if code := exitCode(run(args, streams), &errOut); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
	}
	apply() // creates, and fills the caches
	apply() // patches nothing, and fills the OpenAPI documents' cache
	mu.Lock()
	requests = nil
	mu.Unlock()
	apply()
	want := []string{
		"GET /version",
		"GET /openapi/v3",
		"GET /apis/apps/v1/namespaces/" + ns + "/deployments/d",
	}
	for i := range 3 {
		want = append(want, fmt.Sprintf("GET /api/v1/namespaces/%s/configmaps/c%d", ns, i))
	}
	mu.Lock()
	defer mu.Unlock()
	if !sameElements(requests, want) {
		t.Errorf("a no-op run's requests:\n got %q\nwant %q (in any order)", requests, want)
	}
}

func sameElements(a, b []string) bool {
	count := map[string]int{}
	for _, s := range a {
		count[s]++
	}
	for _, s := range b {
		count[s]--
	}
	for _, n := range count {
		if n != 0 {
			return false
		}
	}
	return true
}
