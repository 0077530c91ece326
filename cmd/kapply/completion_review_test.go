package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestCompletionBoundedOnAServerThatNeverAnswers: completing the names of
// a kind against a server that accepts and never answers gives no values
// within completionTimeout and a little more; it took twice the timeout
// (the REST mapper asks discovery again after a failure).
func TestCompletionBoundedOnAServerThatNeverAnswers(t *testing.T) {
	stop := make(chan struct{})
	server := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	defer server.Close()
	defer close(stop)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	config := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"" + server.URL + "\"}\n" +
		"contexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\nusers:\n- name: u\n  user: {token: x}\n"
	if err := os.WriteFile(kubeconfig, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECACHEDIR", t.TempDir())
	for _, args := range [][]string{{"export", "configmaps", ""}, {"export", "configmaps/"}} {
		start := time.Now()
		values, directive := completeOn(t, kubeconfig, args...)
		if took := time.Since(start); took > completionTimeout+2*time.Second || len(values) != 0 || directive != ":4" {
			t.Errorf("__complete %q: %v, values %q, directive %s; want none within %v", args, took, values, directive, completionTimeout)
		}
	}
}
