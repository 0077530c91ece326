package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kapply/kapply/internal/testcluster"
)

// refusedServer is the URL of a port nothing listens on.
func refusedServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return "http://" + addr
}

// runAlone runs kapply, or kubectl, against server with an empty
// kubeconfig and, unless args name one, an empty --cache-dir, so that
// nothing of the user's is read: a discovery cache that ~/.kube/cache kept
// for a server once on server's port would spare the first request.
func runAlone(t *testing.T, program, server string, args ...string) result {
	t.Helper()
	kubeconfig := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(kubeconfig, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(args, "--cache-dir") {
		args = append(args, "--cache-dir", t.TempDir())
	}
	args = append(args, "--kubeconfig", kubeconfig, "--server", server)
	if program == "kapply" {
		var out, errOut bytes.Buffer
		streams := genericiooptions.IOStreams{In: bytes.NewReader(nil), Out: &out, ErrOut: &errOut}
		code := exitCode(run(args, streams), &errOut)
		return result{stdout: out.String(), stderr: errOut.String(), code: code}
	}
	cmd := exec.Command(program, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("%s: %v", program, err)
	}
	r := result{stdout: out.String(), stderr: errOut.String()}
	if exit != nil {
		r.code = exit.ExitCode()
	}
	return r
}

// TestRefusedServerFailsFast: a connection refused on the first request
// (nothing listens there) ends apply, delete and diff at once with
// kubectl's sentence, not after the retry window; apply and delete exit 1
// as kubectl, diff 2 as kubectl diff.
func TestRefusedServerFailsFast(t *testing.T) {
	server := refusedServer(t)
	dir := writeFiles(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n"})
	host := strings.TrimPrefix(server, "http://")
	want := fmt.Sprintf("The connection to the server %s was refused - did you specify the right host or port?\n", host)
	for command, code := range map[string]int{"apply": 1, "delete": 1, "diff": 2} {
		start := time.Now()
		r := runAlone(t, "kapply", server, command, "-f", dir)
		if took := time.Since(start); took > 3*time.Second {
			t.Errorf("%s took %s", command, took)
		}
		if r.code != code || r.stderr != want || r.stdout != "" {
			t.Errorf("%s: exit %d, stderr %q; want exit %d, stderr %q", command, r.code, r.stderr, code, want)
		}
	}
}

// TestLocalErrorsBeforeServer: a malformed or missing file is reported
// even when the server cannot be reached, before the server's error, as
// kubectl reports it (alone for a missing file; for a malformed one, with
// the other file's mapping error), and both exit 1.
func TestLocalErrorsBeforeServer(t *testing.T) {
	server := refusedServer(t)
	dir := writeFiles(t, map[string]string{
		"bad.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: [\n",
		"good.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n",
	})
	refused := fmt.Sprintf("The connection to the server %s was refused", strings.TrimPrefix(server, "http://"))
	for name, file := range map[string]string{
		"malformed": filepath.Join(dir, "bad.yaml"),
		"missing":   filepath.Join(dir, "missing.yaml"),
	} {
		args := []string{"apply", "-f", file, "-f", filepath.Join(dir, "good.yaml"), "--validate=false"}
		r := runAlone(t, "kapply", server, args...)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if r.code != 1 || len(lines) != 2 || !strings.HasPrefix(lines[0], "error: ") || !strings.Contains(lines[0], file) || !strings.HasPrefix(lines[1], refused) {
			t.Errorf("%s: exit %d; want 1, the file's error, then the server's:\n%s", name, r.code, r.stderr)
		}
		if !testcluster.HaveKubectl(t) {
			continue
		}
		k := runAlone(t, "kubectl", server, args...)
		if k.code != 1 || !strings.Contains(k.stderr, strings.TrimPrefix(lines[0], "error: ")) {
			t.Errorf("%s: kubectl exit %d, stderr %q; kapply's file error %q", name, k.code, k.stderr, lines[0])
		}
	}
}
