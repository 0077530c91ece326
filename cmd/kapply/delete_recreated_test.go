package main

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/internal/testcluster"
)

// TestDeleteWaitEndsWhenAControllerCreatesTheNameAgain: an object deleted
// and created again under its name (a StatefulSet's Pod) before the wait
// first lists is another object: the one deleted is gone, and delete
// --wait succeeds at once, as kubectl's does (it waits on the UID the
// DELETE answered), rather than wait out its timeout on the new object.
func TestDeleteWaitEndsWhenAControllerCreatesTheNameAgain(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web-0}\ndata: {a: '1'}\n"})
	if r := kapply(t, "apply", "-f", dir, "-n", ns); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.stderr)
	}
	client := dynClient(t).Resource(gvrOf("configmaps")).Namespace(ns)
	proxy := cluster.StartProxy(t)
	var deleted bool
	var mu sync.Mutex
	var once sync.Once
	proxy.SetRule(func(req *http.Request, _ int64) testcluster.Fault {
		mu.Lock()
		defer mu.Unlock()
		if req.Method == http.MethodDelete && strings.HasSuffix(req.URL.Path, "/configmaps/web-0") {
			deleted = true
		}
		isList := req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/namespaces/"+ns+"/configmaps")
		if deleted && isList {
			once.Do(func() { // the controller, before the wait lists
				again := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": map[string]any{"name": "web-0"}}}
				if _, err := client.Create(context.Background(), again, metav1.CreateOptions{}); err != nil {
					t.Errorf("creating web-0 again: %v", err)
				}
			})
		}
		return testcluster.Pass
	})
	r := kapplyVia(t, proxy.Kubeconfig, "delete", "-f", dir, "-n", ns, "--wait", "--timeout=8s")
	t.Logf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	if r.code != 0 || !strings.Contains(r.stdout, `configmap "web-0" deleted`) {
		t.Errorf("exit %d, want 0 and web-0 deleted", r.code)
	}
}
