package apply_test

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/lastapplied"
)

// unrecordableConfigMap is a ConfigMap of n random keys: its record does not
// fit the annotation limit even packed (random keys do not compress, and
// keys are never elided).
func unrecordableConfigMap(t *testing.T, n int, drop string) (string, string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: huge}\ndata:\n")
	var first string
	for i := range n {
		raw := make([]byte, 20)
		if _, err := rand.Read(raw); err != nil {
			t.Fatal(err)
		}
		key := "k" + hex.EncodeToString(raw)
		if i == 0 {
			first = key
		}
		if key != drop {
			fmt.Fprintf(&b, "  %s: v\n", key)
		}
	}
	return b.String(), first
}

// TestServerSideAppliesWithoutARecordThatCannotFit: an object whose
// last-applied record cannot fit even packed fails client-side apply with a
// clear error, as kubectl's "Too long" does, and applies server-side without
// the record (one warning), as kubectl --server-side does; re-applying is
// unchanged and a key dropped from the file is deleted.
func TestServerSideAppliesWithoutARecordThatCannotFit(t *testing.T) {
	requireCluster(t)
	w := newWorld(t, kapplyTool, nil)
	manifest, first := unrecordableConfigMap(t, 11000, "")
	path := writeManifest(t, w, manifest)

	ev := kapplyRun(t, w, path)[0]
	if ev.Outcome != apply.Failed || !errors.Is(ev.Err, lastapplied.ErrTooLarge) {
		t.Fatalf("client-side apply: %s %v, want failed with %v", ev.Outcome, ev.Err, lastapplied.ErrTooLarge)
	}

	ev = serverSideRun(t, w, path)[0]
	if ev.Outcome != apply.Created || len(ev.Warnings) != 1 || !strings.Contains(ev.Warnings[0], "without a last-applied record") {
		t.Fatalf("server-side apply: %s %v, warnings %q", ev.Outcome, ev.Err, ev.Warnings)
	}
	live := get(t, w, objRef{configMaps, "huge"})
	if _, ok := live.GetAnnotations()[lastapplied.Annotation]; ok {
		t.Errorf("live object carries a last-applied record")
	}
	if ev = serverSideRun(t, w, path)[0]; ev.Outcome != apply.Unchanged {
		t.Errorf("server-side re-apply: %s %v", ev.Outcome, ev.Err)
	}

	dropped := strings.Replace(manifest, "  "+first+": v\n", "", 1)
	if ev = serverSideRun(t, w, writeManifest(t, w, dropped))[0]; ev.Outcome != apply.Configured {
		t.Fatalf("server-side apply without a key: %s %v", ev.Outcome, ev.Err)
	}
	if _, ok := get(t, w, objRef{configMaps, "huge"}).Object["data"].(map[string]any)[first]; ok {
		t.Errorf("key %s dropped from the file is still live", first)
	}
	if !haveKubectl(t) {
		return
	}
	// kubectl, in a namespace of its own: client-side refused, server-side
	// applied.
	k := newWorld(t, kubectlTool, nil)
	out, err := exec.Command("kubectl", "apply", "-f", path, "-n", k.ns, "--kubeconfig", cluster.Kubeconfig).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Too long") {
		t.Errorf("kubectl client-side apply: %v, want Too long\n%.300s", err, out)
	}
	runKubectl(t, k, "apply", "--server-side", "-f", path)
}

func serverSideRun(t *testing.T, w *world, path string) []apply.Event {
	t.Helper()
	return kapplyRunOpts(t, w, fileRun{path, apply.Options{Write: apply.WriteOptions{Namespace: w.ns, ServerSide: true}}})
}
