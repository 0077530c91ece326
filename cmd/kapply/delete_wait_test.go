package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapply/kapply/internal/testcluster"
)

// TestDeleteWaitsForFinalizers: `delete --wait` watches (kstatus's
// machinery, as apply --wait) until each object is gone. An object whose
// finalizer another controller removes a moment later is deleted once it
// goes; one whose finalizer nobody removes fails at the timeout, named with
// its state, and the exit code is 1 — the other object is still reported
// deleted.
func TestDeleteWaitsForFinalizers(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"cms.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: slow, finalizers: [example.com/slow]}\n---\n" +
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: stuck, finalizers: [example.com/stuck]}\n"})
	mustApply(t, dir, ns, "configmap/slow created\nconfigmap/stuck created\n")
	client := dynClient(t)
	released := make(chan error, 1)
	go func() {
		// The controller: once slow is being deleted, it finishes its work.
		for range 100 {
			time.Sleep(200 * time.Millisecond)
			live, err := client.Resource(configMaps).Namespace(ns).Get(context.Background(), "slow", metav1.GetOptions{})
			if err == nil && live.GetDeletionTimestamp() != nil {
				time.Sleep(time.Second)
				_, err = client.Resource(configMaps).Namespace(ns).Patch(context.Background(), "slow", types.MergePatchType,
					[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
				released <- err
				return
			}
		}
		released <- nil
	}()
	start := time.Now()
	r := kapply(t, "delete", "-f", dir, "-n", ns, "--wait", "--timeout=4s")
	if err := <-released; err != nil {
		t.Fatalf("removing the finalizer: %v", err)
	}
	if r.code != exitFailed || r.stdout != fmt.Sprintf("configmap \"slow\" deleted from %s namespace\n", ns) ||
		!strings.Contains(r.stderr, "configmap/stuck -n "+ns) || !strings.Contains(r.stderr, "waiting for the deletion to finish") ||
		!strings.Contains(r.stderr, "Terminating") {
		t.Errorf("delete --wait: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if took := time.Since(start); took < 4*time.Second {
		t.Errorf("returned after %s, before the timeout of the stuck object", took)
	}
	// Clean up: let the stuck one go.
	if _, err := client.Resource(configMaps).Namespace(ns).Patch(context.Background(), "stuck", types.MergePatchType,
		[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}
