package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/kapply/kapply/internal/testcluster"
	"github.com/kapply/kapply/pkg/lastapplied"
)

// malformedRecords are kubectl records that are not a JSON object, each
// recording keys a and b.
var malformedRecords = map[string]string{
	"junk":   `{"apiVersion":"v1","data":{"a":"1","b":"2"},"kind":"ConfigMap","metadata":{"annotations":{},"name":"junk"}} x`,
	"comma":  `{"apiVersion":"v1","data":{"a":"1","b":"2",},"kind":"ConfigMap","metadata":{"annotations":{},"name":"comma"}}`,
	"huge":   `{"apiVersion":"v1","data":{"a":"1","b":"2"},"kind":"ConfigMap","metadata":{"annotations":{},"name":"huge"},"n":1e999}`,
	"escape": `{"apiVersion":"v1","data":{"a":"\q","b":"2"},"kind":"ConfigMap","metadata":{"annotations":{},"name":"escape"}}`,
	"array":  `[{"apiVersion":"v1","data":{"a":"1","b":"2"},"kind":"ConfigMap","metadata":{"annotations":{},"name":"array"}}]`,
}

// noRecords are kubectl records that kubectl takes for none.
var noRecords = map[string]string{"empty": "", "nothing": "null"}

// createWithRecord creates, as another writer would (no client rewrites
// the annotation), ConfigMap name holding keys a and b with annotations.
func createWithRecord(t *testing.T, ns, name string, annotations map[string]any) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "annotations": annotations},
		"data":     map[string]any{"a": "1", "b": "2"}}}
	if _, err := dynClient(t).Resource(configMaps).Namespace(ns).Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating %s: %v", name, err)
	}
}

// malformedRecordWorld creates in a new namespace a ConfigMap for each
// malformed and each empty record, and writes a file per object that
// drops key b, plus one for a new ConfigMap.
func malformedRecordWorld(t *testing.T) (ns, dir string) {
	t.Helper()
	ns = cluster.Namespace(t)
	files := map[string]string{"good.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: good}\ndata: {a: \"1\"}\n"}
	for _, records := range []map[string]string{malformedRecords, noRecords} {
		for name, record := range records {
			createWithRecord(t, ns, name, map[string]any{lastapplied.Annotation: record})
			files[name+".yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\ndata: {a: \"1\"}\n"
		}
	}
	return ns, writeFiles(t, files)
}

// TestMalformedKubectlRecordRefusedAsKubectl: a kubectl record with
// trailing junk, a trailing comma, a number out of range (1e999), a bad
// escape, or an array is refused as kubectl refuses it — the object named
// with its file, "invalid JSON document", left as it was — while the other
// objects are applied and the exit code is 1. An empty or null record is
// no record, for both: the object is applied and nothing deleted. Compared
// with kubectl v1.37.1 itself when its binary is there.
func TestMalformedKubectlRecordRefusedAsKubectl(t *testing.T) {
	testcluster.Require(t, cluster)
	ns, dir := malformedRecordWorld(t)
	r := kapply(t, "apply", "-f", dir, "-n", ns)
	if want := "configmap/empty configured\nconfigmap/good created\nconfigmap/nothing configured\n"; r.code != exitFailed || r.stdout != want {
		t.Errorf("exit %d, stdout %q; want exit 1, %q\nstderr:\n%s", r.code, r.stdout, want, r.stderr)
	}
	cms := dynClient(t).Resource(configMaps).Namespace(ns)
	for name, record := range malformedRecords {
		prefix := "error: configmap/" + name + " -n " + ns + " (from " + filepath.Join(dir, name+".yaml") + "): the " + lastapplied.Annotation + " annotation is not valid JSON"
		if !strings.Contains(r.stderr, prefix) || strings.Count(r.stderr, "invalid JSON document") != len(malformedRecords) {
			t.Errorf("stderr lacks %q (and kubectl's \"invalid JSON document\" once per object):\n%s", prefix, r.stderr)
		}
		assertData(t, cms, name, map[string]any{"a": "1", "b": "2"})
		if live, err := cms.Get(context.Background(), name, metav1.GetOptions{}); err != nil || live.GetAnnotations()[lastapplied.Annotation] != record {
			t.Errorf("%s: the record changed (%v)", name, err)
		}
	}
	for name := range noRecords {
		assertData(t, cms, name, map[string]any{"a": "1", "b": "2"})
	}

	kubectl137 := kubectl137(t)
	if kubectl137 == "" {
		t.Log("kubectl v1.37.1 not built (bin/kubectlcmd/kubectl): not compared")
		return
	}
	ns, dir = malformedRecordWorld(t)
	cmd := exec.Command(kubectl137, "apply", "-f", dir, "-n", ns, "--kubeconfig", cluster.Kubeconfig)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != exitFailed || stdout.String() != r.stdout ||
		strings.Count(stderr.String(), "for: invalid JSON document") != len(malformedRecords) {
		t.Errorf("kubectl v1.37.1: %v, stdout %q, want kapply's %q\nstderr:\n%.3000s", err, stdout.String(), r.stdout, stderr.String())
	}
}

// kubectl137 is kubectl v1.37.1 as hack/kubectlcmd builds it, "" when it
// is not built.
func kubectl137(t *testing.T) string {
	t.Helper()
	dir, err := testcluster.BinDir()
	if err != nil {
		return ""
	}
	path := filepath.Join(dir, "kubectlcmd", "kubectl")
	if _, err := os.Stat(path); err != nil {
		return ""
	}
	return path
}

// bombRecord is a compact record of 43 KB that unpacks to just under
// 32 MiB of `[{},{},…]`: eleven million maps if decoded.
func bombRecord(t *testing.T) string {
	t.Helper()
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	const unpacked = 32<<20 - 16
	if _, err := zw.Write([]byte("[" + strings.Repeat("{},", unpacked/3-1) + "{}]")); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(zipped.Bytes())
}

// maxBombRSS is the peak RSS allowed to a run over sixteen bombs; the run
// is killed past it.
const maxBombRSS = 300 << 20

// TestCompactRecordBombs: sixteen objects, each carrying a compact record
// that unpacks to just under 32 MiB (43 KB annotations; decoded, 1 GB and
// 15 s an object), applied in one run of the kapply binary with sixteen
// workers: the peak RSS stays under 300 MiB, each object is warned about
// by name, its record treated as absent (key b, dropped from the file, is
// kept: nothing deleted on a guess), and the run applies every object and
// leaves each a record of its own.
func TestCompactRecordBombs(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	bomb := bombRecord(t)
	files := map[string]string{}
	const objects = 16
	for i := range objects {
		name := fmt.Sprintf("bomb-%02d", i)
		createWithRecord(t, ns, name, map[string]any{lastapplied.CompactAnnotation: bomb})
		files[name+".yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\ndata: {a: changed}\n"
	}
	dir := writeFiles(t, files)
	bin := builtKapply(t)
	start := time.Now()
	run := runMeasured(t, maxBombRSS, bin, "apply", "-f", dir, "-n", ns, "--parallel", "16", "--kubeconfig", cluster.Kubeconfig)
	t.Logf("%d bombs: %v, peak RSS %d MiB", objects, time.Since(start).Round(time.Millisecond), run.peakRSS>>20)
	if run.peakRSS > maxBombRSS {
		t.Fatalf("peak RSS %d MiB, want under %d MiB (killed: %v)", run.peakRSS>>20, maxBombRSS>>20, run.killed)
	}
	if run.code != 0 || strings.Count(run.stdout, " configured\n") != objects {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%.2000s", run.code, run.stdout, run.stderr)
	}
	cms := dynClient(t).Resource(configMaps).Namespace(ns)
	for i := range objects {
		name := fmt.Sprintf("bomb-%02d", i)
		warning := "Warning: configmap/" + name + " -n " + ns + ": the compact last-applied record (" + lastapplied.CompactAnnotation + ") cannot be read: it unpacks to more than 1048576 bytes"
		if !strings.Contains(run.stderr, warning) || !strings.Contains(run.stderr, "treating it as absent") {
			t.Errorf("stderr lacks %q:\n%.2000s", warning, run.stderr)
		}
		assertData(t, cms, name, map[string]any{"a": "changed", "b": "2"})
		live, err := cms.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, bombed := live.GetAnnotations()[lastapplied.CompactAnnotation]; bombed || live.GetAnnotations()[lastapplied.Annotation] == "" {
			t.Errorf("%s: annotations after the run: compact record left %v, %d-byte record", name, bombed, len(live.GetAnnotations()[lastapplied.Annotation]))
		}
	}
}

// measured is one run of a program: its output, exit code and peak RSS.
type measured struct {
	stdout, stderr string
	code           int
	peakRSS        int64
	killed         bool
}

// runMeasured runs bin and polls its peak RSS (VmHWM, which starts anew
// at exec: the rusage of a child of this test would report this test's own
// peak when higher, Linux carrying it across exec) until it exits, killing
// it past limit. A peak reached in its last 2 ms is not seen.
func runMeasured(t *testing.T, limit int64, bin string, args ...string) measured {
	t.Helper()
	var stdout, stderr strings.Builder
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var m measured
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			m.stdout, m.stderr = stdout.String(), stderr.String()
			var exit *exec.ExitError
			switch {
			case errors.As(err, &exit):
				m.code = exit.ExitCode()
			case err != nil:
				t.Fatal(err)
			}
			return m
		case <-tick.C:
			m.peakRSS = max(m.peakRSS, vmHWM(cmd.Process.Pid))
			if m.peakRSS > limit && !m.killed {
				m.killed = cmd.Process.Kill() == nil
			}
		}
	}
}

// vmHWM is the peak RSS of process pid in bytes, 0 once it has exited.
func vmHWM(pid int) int64 {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kib, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kib << 10
		}
	}
	return 0
}

// builtKapply builds cmd/kapply once per test binary.
func builtKapply(t *testing.T) string {
	t.Helper()
	kapplyBuild.once.Do(func() {
		dir, err := os.MkdirTemp("", "kapply-bin-")
		if err != nil {
			kapplyBuild.err = err
			return
		}
		kapplyBuild.path = filepath.Join(dir, "kapply")
		if out, err := exec.Command("go", "build", "-o", kapplyBuild.path, ".").CombinedOutput(); err != nil {
			kapplyBuild.err = fmt.Errorf("%w\n%s", err, out)
		}
	})
	if kapplyBuild.err != nil {
		t.Fatalf("building kapply: %v", kapplyBuild.err)
	}
	return kapplyBuild.path
}

var kapplyBuild struct {
	once sync.Once
	path string
	err  error
}

// bigConfigMap is ConfigMap big whose keys each hold 100 KiB: four make a
// record past the annotation limit.
func bigConfigMap(keys ...string) string {
	value := strings.Repeat("0123456789abcdef", 100*1024/16)
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "  %s: %s%s\n", k, k, value)
	}
	return b.String()
}

// TestCompactRecordShadowedByKubectlWarns: kapply compacts the record of
// a big ConfigMap (keys a-d); kubectl apply of a smaller file (a, e) writes
// its own record and leaves the compact one, which it does not know. The
// next kapply apply (file: a) takes kubectl's record — e is deleted — and
// drops the compact one: b, c and d, which only the compact record held,
// stay, and a warning names the object and those keys (no value). The
// next apply is quiet. kubectl v1.37.1 writes its record when its binary
// is there; else its write is made as it makes it (a merge patch of its
// record and the file's keys).
func TestCompactRecordShadowedByKubectlWarns(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"big.yaml": bigConfigMap("a", "b", "c", "d")})
	if r := kapply(t, "apply", "-f", dir, "-n", ns); r.code != 0 || !strings.Contains(r.stderr, lastapplied.CompactAnnotation) {
		t.Fatalf("create: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	writeFile(t, dir, "big.yaml", bigConfigMap("a", "e"))
	kubectlApplies(t, filepath.Join(dir, "big.yaml"), ns)
	cms := dynClient(t).Resource(configMaps).Namespace(ns)
	live, err := cms.Get(context.Background(), "big", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if annotations := live.GetAnnotations(); annotations[lastapplied.Annotation] == "" || annotations[lastapplied.CompactAnnotation] == "" {
		t.Fatalf("after kubectl apply, want both records: %v", slices.Collect(maps.Keys(annotations)))
	}

	writeFile(t, dir, "big.yaml", bigConfigMap("a"))
	r := kapply(t, "apply", "-f", dir, "-n", ns)
	warning := "Warning: configmap/big -n " + ns + ": kapply drops its " + lastapplied.CompactAnnotation + " record: kubectl apply wrote " + lastapplied.Annotation +
		" after it, and that record is the one kapply reads; these fields only the compact record held stay on the object, and are no longer removed when the file drops them: data.b, data.c, data.d\n"
	if r.code != 0 || r.stdout != "configmap/big configured\n" || !strings.Contains(r.stderr, warning) || strings.Contains(r.stderr, "0123456789abcdef") {
		t.Errorf("exit %d, stdout %q\nstderr:\n%.3000s\nwant the warning:\n%s", r.code, r.stdout, r.stderr, warning)
	}
	live, err = cms.Get(context.Background(), "big", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	data := live.Object["data"].(map[string]any)
	if keys := slices.Sorted(maps.Keys(data)); !slices.Equal(keys, []string{"a", "b", "c", "d"}) {
		t.Errorf("live keys %v, want a-d: e deleted by kubectl's record, b-d kept", keys)
	}
	if _, compact := live.GetAnnotations()[lastapplied.CompactAnnotation]; compact {
		t.Error("the compact record is still there")
	}
	if r := kapply(t, "apply", "-f", dir, "-n", ns); r.code != 0 || r.stdout != "configmap/big unchanged\n" || strings.Contains(r.stderr, "Warning") {
		t.Errorf("re-apply: exit %d, stdout %q\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// kubectlApplies runs kubectl v1.37.1 apply of file, an object that has
// no kubectl record yet; without its binary it makes kubectl's write: a
// patch of the file's data and its record (lastapplied.Encode writes
// kubectl's bytes), deleting nothing.
func kubectlApplies(t *testing.T, file, ns string) {
	t.Helper()
	if bin := kubectl137(t); bin != "" {
		if out, err := exec.Command(bin, "apply", "-f", file, "-n", ns, "--kubeconfig", cluster.Kubeconfig).CombinedOutput(); err != nil {
			t.Fatalf("kubectl apply: %v\n%s", err, out)
		}
		return
	}
	t.Log("kubectl v1.37.1 not built (bin/kubectlcmd/kubectl): its write is made by the test")
	content, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(content, &obj.Object); err != nil {
		t.Fatal(err)
	}
	obj.SetNamespace(ns)
	record, err := lastapplied.Encode(obj)
	if err != nil {
		t.Fatal(err)
	}
	patch, err := json.Marshal(map[string]any{"data": obj.Object["data"], "metadata": map[string]any{"annotations": map[string]any{lastapplied.Annotation: string(record)}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dynClient(t).Resource(configMaps).Namespace(ns).Patch(context.Background(), obj.GetName(), types.StrategicMergePatchType, patch,
		metav1.PatchOptions{FieldManager: "kubectl-client-side-apply"}); err != nil {
		t.Fatal(err)
	}
}
