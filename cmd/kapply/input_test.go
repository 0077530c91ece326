package main

import (
	"bytes"
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

	"github.com/kapply/kapply/internal/testcluster"
)

// Input read once, within bounds: a FIFO, stdin that never ends, an
// endless device, a huge sparse file, a URL that never answers.

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
	cmd := exec.Command(builtKapply(t), "apply", "-f", "/dev/zero", "--kubeconfig", cluster.Kubeconfig)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(30*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()
	err := cmd.Wait()
	took := time.Since(start)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitFailed || !strings.Contains(stderr.String(), "error reading /dev/zero: larger than 256 MiB") {
		t.Fatalf("%v, stderr %q; want exit 1 and the size limit", err, stderr.String())
	}
	peak := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
	t.Logf("took %s, peak RSS %d MiB", took, peak>>20)
	if peak > 450<<20 || took > 10*time.Second {
		t.Errorf("took %s, peak RSS %d MiB; want under 10 s and 450 MiB", took, peak>>20)
	}
}
