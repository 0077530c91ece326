package main

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kapply/kapply/internal/testcluster"
)

// TestFleetContextsShareOpenAPIDocuments: six contexts on one server,
// planned at once with an empty --cache-dir, fetch each OpenAPI document
// the server lists with a hash once, not once per context, and each
// context's object is still merged and patched.
func TestFleetContextsShareOpenAPIDocuments(t *testing.T) {
	testcluster.Require(t, cluster)
	proxy := cluster.StartProxy(t)
	var mu sync.Mutex
	fetches := map[string]int{}
	proxy.SetRule(func(req *http.Request, _ int64) testcluster.Fault {
		if strings.HasPrefix(req.URL.Path, "/openapi/v3/") && req.URL.Query().Has("hash") {
			mu.Lock()
			fetches[req.URL.Path]++
			mu.Unlock()
		}
		return testcluster.Pass
	})
	cfg, err := clientcmd.LoadFromFile(proxy.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	base := cfg.Contexts[cfg.CurrentContext]
	namespaces := map[string]string{}
	for _, name := range []string{"c1", "c2", "c3", "c4", "c5", "c6"} {
		ctx := base.DeepCopy()
		ctx.Namespace = cluster.Namespace(t)
		cfg.Contexts[name], namespaces[name] = ctx, ctx.Namespace
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	cacheDir := t.TempDir()
	apply := func(manifest string) {
		t.Helper()
		dir := writeFiles(t, map[string]string{"cm.yaml": manifest})
		r := kapplyKubeconfig(t, kubeconfig, "apply", "-f", dir, "--contexts", "c*", "--max-parallel", "6", "--cache-dir", cacheDir)
		if r.code != 0 {
			t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	}
	apply(fleetConfigMap)
	mu.Lock()
	clear(fetches)
	mu.Unlock()
	apply(strings.Replace(fleetConfigMap, "k: v1", "k: v2", 1)) // a patch: the merge reads the schema

	mu.Lock()
	if len(fetches) == 0 {
		t.Error("no OpenAPI document fetched: the test shows nothing")
	}
	for path, n := range fetches {
		if n != 1 {
			t.Errorf("%s fetched %d times by 6 contexts, want once", path, n)
		}
	}
	mu.Unlock()
	client := kubernetes.NewForConfigOrDie(cluster.Config)
	for ctx, ns := range namespaces {
		cm, err := client.CoreV1().ConfigMaps(ns).Get(context.Background(), "fleet", metav1.GetOptions{})
		if err != nil || cm.Data["k"] != "v2" {
			t.Errorf("context %s: %v, data %v; want k: v2", ctx, err, cm.Data)
		}
	}
}
