package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kapply/kapply/internal/peakrss"
	"github.com/kapply/kapply/internal/testcluster"
	"github.com/kapply/kapply/pkg/lastapplied"
)

// Input read once, within bounds: a FIFO, stdin that never ends, an
// endless device, a huge sparse file, a URL that never answers; and YAML
// merge keys stored as kubectl stores them.

const inputConfigMap = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: NAME}\ndata: {k: v}\n"

// TestApplyFIFO: a FIFO is read once and its ConfigMap applied, as kubectl
// does (it was opened twice: the second open waited for ever for a writer).
func TestApplyFIFO(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	fifo := filepath.Join(t.TempDir(), "cm.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		// Blocks until kapply opens the FIFO; a writer left waiting is
		// released when the test ends (see below).
		_ = os.WriteFile(fifo, []byte(strings.Replace(inputConfigMap, "NAME", "from-fifo", 1)), 0)
	}()
	r := runWithin(t, 30*time.Second, func() result { return kapply(t, "apply", "-f", fifo, "-n", ns) })
	if r.code != 0 || r.stdout != "configmap/from-fifo created\n" {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if data := liveObject(t, configMaps, ns, "from-fifo").Object["data"]; !equalJSON(data, map[string]any{"k": "v"}) {
		t.Errorf("data %v", data)
	}
}

// runWithin runs fn, and fails the test when it takes longer than limit (fn
// is left running: an in-process run cannot be stopped).
func runWithin(t *testing.T, limit time.Duration, fn func() result) result {
	t.Helper()
	done := make(chan result, 1)
	go func() { done <- fn() }()
	select {
	case r := <-done:
		return r
	case <-time.After(limit):
		t.Fatalf("still running after %s", limit)
		return result{}
	}
}

func equalJSON(a, b any) bool {
	x, errA := json.Marshal(a)
	y, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(x, y)
}

// TestApplyInputTooLarge: a 2 GB sparse file, by name and on stdin, fails
// at once with the size limit, naming the input; exit 1. (An endless
// device: TestApplyEndlessDeviceMemory, in a process of its own.)
func TestApplyInputTooLarge(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	sparse := filepath.Join(t.TempDir(), "sparse.yaml")
	if err := os.WriteFile(sparse, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(sparse, 2<<30); err != nil {
		t.Fatal(err)
	}
	stdin, err := os.Open(sparse)
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	for _, c := range []struct {
		file  string
		stdin io.Reader
		name  string
		limit time.Duration
	}{
		{file: sparse, name: sparse, limit: 2 * time.Second},
		{file: "-", stdin: stdin, name: "STDIN", limit: 2 * time.Second},
	} {
		start := time.Now()
		in := c.stdin
		if in == nil {
			in = bytes.NewReader(nil)
		}
		r := runWithin(t, 60*time.Second, func() result { return kapplyWithStdin(t, in, "apply", "-f", c.file, "-n", ns) })
		want := "error reading " + c.name + ": larger than 256 MiB, the most kapply reads from one file, stdin or URL"
		if r.code != exitFailed || !strings.Contains(r.stderr, want) {
			t.Errorf("-f %s: exit %d, stderr %q; want exit 1 and %q", c.file, r.code, r.stderr, want)
		}
		if took := time.Since(start); took > c.limit {
			t.Errorf("-f %s took %s", c.file, took)
		}
	}
}

// TestApplyURLRequestTimeout: a URL that never answers fails after
// --request-timeout, naming the URL (the builder's client waited for
// ever); a URL that answers is applied.
func TestApplyURLRequestTimeout(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	release := make(chan struct{})
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/cm.yaml" {
			io.WriteString(w, strings.Replace(inputConfigMap, "NAME", "from-url", 1))
			return
		}
		select { // never answers
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer server.Close()
	defer close(release)
	start := time.Now()
	r := runWithin(t, 30*time.Second, func() result {
		return kapply(t, "apply", "-f", server.URL+"/never.yaml", "-n", ns, "--request-timeout=1s")
	})
	want := "error reading " + server.URL + "/never.yaml: no complete answer within the request timeout (1s)"
	if r.code != exitFailed || !strings.Contains(r.stderr, want) {
		t.Errorf("exit %d, stderr %q; want exit 1 and %q", r.code, r.stderr, want)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %s with --request-timeout=1s", took)
	}
	r = kapply(t, "apply", "-f", server.URL+"/cm.yaml", "-n", ns, "--request-timeout=5s")
	if r.code != 0 || r.stdout != "configmap/from-url created\n" {
		t.Errorf("a URL that answers: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestApplyStdinSignal: a SIGTERM while apply waits on a stdin that never
// ends makes it exit at once, naming what it did not read, with exit 1 (as
// an interrupted apply); no SIGKILL needed.
func TestApplyStdinSignal(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	stdin, writer, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	defer stdin.Close()
	cmd := exec.Command(builtKapply(t), "apply", "-f", "-", "-n", ns, "--kubeconfig", cluster.Kubeconfig)
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stderr = stdin, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// A comment, which kapply reads once it waits on stdin (TIOCINQ: the
	// bytes in the pipe) (its signal
	// handler is set by then): the pipe is empty again.
	if _, err := writer.WriteString("# more to come\n"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if n, err := unix.IoctlGetInt(int(stdin.Fd()), unix.TIOCINQ); err != nil || n == 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("kapply did not read stdin")
		}
	}
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-exited:
	case <-time.After(2 * time.Second):
		cmd.Process.Kill()
		<-exited
		t.Fatalf("still running 2 s after SIGTERM\n%s", stderr.String())
	}
	took := time.Since(start)
	want := "error reading STDIN: terminated signal received"
	if code := cmd.ProcessState.ExitCode(); code != exitFailed || !strings.Contains(stderr.String(), want) {
		t.Errorf("exit %d (%v), stderr %q; want exit 1 and %q", code, cmd.ProcessState, stderr.String(), want)
	}
	t.Logf("exited %s after SIGTERM", took)
}

// TestApplyEndlessDeviceMemory: -f /dev/zero stops at the size limit in a
// process of its own, quickly and without holding much more than the
// limit (kubectl grows until the OOM killer).
func TestApplyEndlessDeviceMemory(t *testing.T) {
	testcluster.Require(t, cluster)
	run, err := peakrss.Command(context.Background(), builtKapply(t), "apply", "-f", "/dev/zero", "--kubeconfig", cluster.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cmd := run.Cmd
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(30*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()
	err = cmd.Wait()
	took := time.Since(start)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitFailed || !strings.Contains(stderr.String(), "error reading /dev/zero: larger than 256 MiB") {
		t.Fatalf("%v, stderr %q; want exit 1 and the size limit", err, stderr.String())
	}
	peak, err := run.Peak()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("took %s, peak RSS %d MiB", took, peak>>20)
	if peak > 450<<20 || took > 10*time.Second {
		t.Errorf("took %s, peak RSS %d MiB; want under 10 s and 450 MiB", took, peak>>20)
	}
}

// TestOwnershipCommandsReadInputOnce: the commands that read files to name
// live objects (last-applied, status, adopt, release) read a FIFO once and
// stdin from the command's input, and refuse an input over the size
// limit, naming it.
func TestOwnershipCommandsReadInputOnce(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	doc := strings.Replace(inputConfigMap, "NAME", "owned", 1)
	r := kapplyWithStdin(t, strings.NewReader(doc), "apply", "-f", "-", "-n", ns)
	if r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.stderr)
	}
	fifo := filepath.Join(t.TempDir(), "cm.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() { _ = os.WriteFile(fifo, []byte(doc), 0) }()
	r = runWithin(t, 30*time.Second, func() result { return kapply(t, "last-applied", "view", "-f", fifo, "-n", ns, "-o", "json") })
	if r.code != 0 || !strings.Contains(r.stdout, `"name": "owned"`) {
		t.Errorf("last-applied view -f FIFO: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = kapplyWithStdin(t, strings.NewReader(doc), "status", "-f", "-", "-n", ns)
	if r.code != 0 || !strings.Contains(r.stdout, "owned") {
		t.Errorf("status -f -: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	sparse := filepath.Join(t.TempDir(), "sparse.yaml")
	if err := os.WriteFile(sparse, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(sparse, 1<<30); err != nil {
		t.Fatal(err)
	}
	for _, command := range [][]string{{"status"}, {"adopt"}, {"release", "--field", "data.k"}, {"last-applied", "view"}} {
		r := kapply(t, append(command, "-f", sparse, "-n", ns)...)
		if want := "error reading " + sparse + ": larger than 256 MiB"; r.code == 0 || !strings.Contains(r.stderr, want) {
			t.Errorf("%v -f SPARSE: exit %d, stderr %q; want %q", command, r.code, r.stderr, want)
		}
	}
}

// mergeKeyCases are documents whose annotations use YAML merge keys, and
// the annotations yaml.v2, and so kubectl, makes of them: a key merged and
// set is set by the later of the two; of two merged maps, the first wins.
var mergeKeyCases = []struct {
	name, doc string
	want      map[string]string
}{
	{"merge, then the key", "metadata:\n  name: NAME\n  labels: &common {tier: old, team: a}\n  annotations: {<<: *common, tier: new}\n",
		map[string]string{"tier": "new", "team": "a"}},
	{"the key, then a merge", "metadata:\n  name: NAME\n  labels: &common {tier: old, team: a}\n  annotations: {tier: new, <<: *common}\n",
		map[string]string{"tier": "old", "team": "a"}},
	{"a list of merges", "data: &b {x: '3', v: '2'}\nmetadata:\n  name: NAME\n  labels: &a {x: '1'}\n  annotations:\n    <<: [*a, *b]\n    z: '4'\n",
		map[string]string{"x": "1", "v": "2", "z": "4"}},
	{"a merge of a merge", "metadata:\n  name: NAME\n  labels: &a {x: '1', w: '0'}\n  annotations: &b\n    <<: *a\n    x: '3'\ndata:\n  <<: *b\n  x: '5'\n",
		map[string]string{"w": "0", "x": "3"}},
}

// TestApplyYAMLMergeKeys: merge keys that set a key the map sets too are
// valid YAML, applied as kubectl v1.37 applies them (same annotations,
// same last-applied record); a key written twice stays refused.
func TestApplyYAMLMergeKeys(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	kubectl137 := ""
	if dir, err := testcluster.BinDir(); err == nil {
		if _, err := os.Stat(filepath.Join(dir, "kubectlcmd", "kubectl")); err == nil {
			kubectl137 = filepath.Join(dir, "kubectlcmd", "kubectl")
		}
	}
	for i, c := range mergeKeyCases {
		name := string(rune('a' + i))
		doc := "apiVersion: v1\nkind: ConfigMap\n" + strings.Replace(c.doc, "NAME", "p-"+name, 1)
		r := kapplyWithStdin(t, strings.NewReader(doc), "apply", "-f", "-", "-n", ns)
		if r.code != 0 {
			t.Errorf("%s: exit %d\n%s", c.name, r.code, r.stderr)
			continue
		}
		ours := liveObject(t, configMaps, ns, "p-"+name)
		annotations := ours.GetAnnotations()
		record := annotations[lastapplied.Annotation]
		delete(annotations, lastapplied.Annotation)
		if !equalJSON(annotations, c.want) {
			t.Errorf("%s: annotations %v, want %v", c.name, annotations, c.want)
		}
		if kubectl137 == "" {
			continue
		}
		cmd := exec.Command(kubectl137, "apply", "-f", "-", "-n", ns, "--kubeconfig", cluster.Kubeconfig)
		cmd.Stdin = strings.NewReader(strings.Replace(doc, "p-"+name, "k-"+name, 1))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: kubectl v1.37: %v\n%s", c.name, err, out)
		}
		theirs := liveObject(t, configMaps, ns, "k-"+name).GetAnnotations()
		if want := strings.Replace(theirs[lastapplied.Annotation], `"k-`+name+`"`, `"p-`+name+`"`, 1); record != want {
			t.Errorf("%s: last-applied record\n%s\nkubectl v1.37's\n%s", c.name, record, want)
		}
		delete(theirs, lastapplied.Annotation)
		if !equalJSON(annotations, theirs) {
			t.Errorf("%s: annotations %v, kubectl v1.37's %v", c.name, annotations, theirs)
		}
	}
	if kubectl137 == "" {
		t.Log("no kubectl v1.37 in the binaries: compared with yaml.v2's answers only")
	}
	doc := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: twice\n  labels: &l {a: b}\n  annotations:\n    <<: *l\n    k: '1'\n    k: '2'\n"
	r := kapplyWithStdin(t, strings.NewReader(doc), "apply", "-f", "-", "-n", ns)
	if want := `error parsing STDIN: document 1: line 9: key "k" already set in map`; r.code != exitFailed || !strings.Contains(r.stderr, want) {
		t.Errorf("a key written twice beside a merge: exit %d, stderr %q; want %q", r.code, r.stderr, want)
	}
	if configMapExists(t, ns, "twice") {
		t.Error("the document with a key written twice was applied")
	}
}
