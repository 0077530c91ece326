package apply_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapply/kapply/internal/testcluster"
	"github.com/kapply/kapply/pkg/apply"
)

// TestForceReplacesOnLastingConflict: a patch the server keeps answering
// with 409 fails after the re-plans, as kubectl's after its retries; with
// Options.Force the object is deleted and created from the file (a new
// UID, the file's data), as kubectl apply --force does for a conflict.
func TestForceReplacesOnLastingConflict(t *testing.T) {
	requireCluster(t)
	f := newFaultRun(t)
	f.write(t, "cms.yaml", manyConfigMaps(1, "1"))
	f.apply(t, cluster.Kubeconfig, apply.Options{}, nil)
	cms := dyn(t).Resource(configMaps).Namespace(f.ns)
	before, err := cms.Get(context.Background(), "cm-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.write(t, "cms.yaml", manyConfigMaps(1, "2"))
	proxy := cluster.StartProxy(t)
	proxy.SetRule(func(req *http.Request, _ int64) testcluster.Fault {
		if req.Method == http.MethodPatch {
			return testcluster.Fault{Status: http.StatusConflict}
		}
		return testcluster.Pass
	})

	events := f.apply(t, proxy.Kubeconfig, apply.Options{}, nil)
	if ev := events[0]; ev.Outcome != apply.Failed || !strings.Contains(strings.ToLower(ev.Err.Error()), "conflict") {
		t.Errorf("without Force: %s %v, want a failed conflict", ev.Outcome, ev.Err)
	}
	events = f.apply(t, proxy.Kubeconfig, apply.Options{Force: &apply.ForceOptions{}}, nil)
	if ev := events[0]; ev.Outcome != apply.Configured || ev.Err != nil {
		t.Fatalf("with Force: %s %v, want configured", ev.Outcome, ev.Err)
	}
	after, err := cms.Get(context.Background(), "cm-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.GetUID() == before.GetUID() || after.Object["data"].(map[string]any)["version"] != "2" {
		t.Errorf("not replaced from the file: uid %s (was %s), data %v", after.GetUID(), before.GetUID(), after.Object["data"])
	}
	recordsMatchLive(t, f.ns)
}
