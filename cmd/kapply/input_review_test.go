package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kapply/kapply/internal/testcluster"
)

// TestApplyStdinNamedTwice: -f - -f /dev/stdin name one pipe twice; apply
// reads them one after the other, as kubectl does: stdin gets every
// document, whole, /dev/stdin nothing; all applied, exit 0. The two were
// read at once, each getting pieces of the documents ("error parsing
// /dev/stdin", exit 1), when the writer wrote more than a pipe holds.
func TestApplyStdinNamedTwice(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	var docs strings.Builder
	for i := range 4 {
		fmt.Fprintf(&docs, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: piece-%d}\ndata:\n", i)
		for j := range 20 {
			fmt.Fprintf(&docs, "  k%d: %s\n", j, strings.Repeat("x", 10000))
		}
		docs.WriteString("---\n")
	}
	stdin, writer, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	cmd := exec.Command(builtKapply(t), "apply", "-f", "-", "-f", "/dev/stdin", "-n", ns, "-o", "name", "--kubeconfig", cluster.Kubeconfig)
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// In pieces, a little apart: both reads see bytes come.
	s := docs.String()
	for i := 0; i < len(s); i += 7000 {
		if _, err := writer.WriteString(s[i:min(i+7000, len(s))]); err != nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	writer.Close()
	timer := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()
	err = cmd.Wait()
	want := "configmap/piece-0\nconfigmap/piece-1\nconfigmap/piece-2\nconfigmap/piece-3\n"
	if err != nil || stdout.String() != want {
		t.Fatalf("%v\nstdout %q\nstderr %.400s\nwant %q, exit 0", err, stdout.String(), stderr.String(), want)
	}
}

// TestApplyKustomizeSignal: the builder runs kustomize itself, and reads
// what the kustomization names: here a remote file whose server never
// answers. A SIGTERM ends the run at once, naming the kustomization, exit
// 1, as it does while kapply reads -f; the first signal did nothing
// (kustomize cannot be cancelled): the run went on until a second one.
func TestApplyKustomizeSignal(t *testing.T) {
	testcluster.Require(t, cluster)
	asked := make(chan struct{}, 1)
	release := make(chan struct{})
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case asked <- struct{}{}:
		default:
		}
		<-release
	}))
	defer server.Close()
	defer close(release)
	dir := writeFiles(t, map[string]string{"kustomization.yaml": "resources: [" + server.URL + "/cm.yaml]\n"})
	cmd := exec.Command(builtKapply(t), "apply", "-k", dir, "-n", cluster.Namespace(t), "--kubeconfig", cluster.Kubeconfig)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-asked:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("kustomize did not ask for the remote file")
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-exited:
	case <-time.After(3 * time.Second):
		cmd.Process.Kill()
		<-exited
		t.Fatalf("still running 3 s after SIGTERM\n%s", stderr.String())
	}
	want := "error reading " + dir + ": terminated signal received"
	if code := cmd.ProcessState.ExitCode(); code != exitFailed || !strings.Contains(stderr.String(), want) {
		t.Errorf("exit %d, stderr %q; want exit 1 and %q", code, stderr.String(), want)
	}
}
