//go:build unix

package cluster

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd/api"
)

// syncBuffer is a bytes.Buffer safe for the plugin's stderr copier.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// pluginAt writes script as an executable plugin and returns its config.
func pluginAt(t *testing.T, script string) *rest.Config {
	t.Helper()
	path := filepath.Join(t.TempDir(), "plugin")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	return &rest.Config{Host: "https://example.invalid", ExecProvider: &api.ExecConfig{
		Command: path, APIVersion: "client.authentication.k8s.io/v1", InteractiveMode: api.NeverExecInteractiveMode,
	}}
}

// processGone tells whether pid has ended (a zombie has), within a second.
func processGone(pid int) bool {
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return true
		}
		if _, state, _ := strings.Cut(string(stat), ") "); strings.HasPrefix(state, "Z") {
			return true
		}
	}
	return false
}

// TestExecPluginKilledWithItsContext: a plugin that never answers is
// killed when the request's context ends, with what it started (its
// process group); what it wrote to stderr reaches the run's stderr, and
// the error says it was killed.
func TestExecPluginKilledWithItsContext(t *testing.T) {
	dir := t.TempDir()
	cfg := pluginAt(t, "echo logging in >&2\nsleep 60 &\necho $$ $! > "+filepath.Join(dir, "pids")+"\nwait\n")
	plugin, err := newExecPlugin(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	_, err = plugin.run(ctx, &stderr)
	if took := time.Since(start); took > time.Second+pluginWaitDelay+time.Second {
		t.Errorf("the plugin held the request %v past its 1s deadline", took)
	}
	if err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("error %v, want the plugin killed", err)
	}
	if !strings.Contains(stderr.String(), "logging in") {
		t.Errorf("stderr %q, want the plugin's", stderr.String())
	}
	data, err := os.ReadFile(filepath.Join(dir, "pids"))
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range strings.Fields(string(data)) {
		pid, _ := strconv.Atoi(field)
		if !processGone(pid) {
			t.Errorf("plugin process %d outlived its context", pid)
			_ = killProcess(pid)
		}
	}
}

// TestExecPluginAnswer: the plugin gets the ExecCredential request in
// KUBERNETES_EXEC_INFO and its env; its token is sent as a bearer token,
// cached until it expires; a broken answer is client-go's error.
func TestExecPluginAnswer(t *testing.T) {
	dir := t.TempDir()
	cfg := pluginAt(t, `echo "$KUBERNETES_EXEC_INFO $EXTRA" >> `+filepath.Join(dir, "calls")+`
echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t-1"}}'`)
	cfg.ExecProvider.Env = []api.ExecEnvVar{{Name: "EXTRA", Value: "x"}}
	creds, err := execCredentialsFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		got, err := creds.get(context.Background(), &syncBuffer{})
		if err != nil || got.token != "t-1" {
			t.Fatalf("creds %+v, %v", got, err)
		}
	}
	calls, err := os.ReadFile(filepath.Join(dir, "calls"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(calls), `"kind":"ExecCredential"`); n != 1 || !strings.Contains(string(calls), `"kind":"ExecCredential"`) || !strings.Contains(string(calls), " x\n") {
		t.Errorf("the plugin ran %d times with %q, want once with the request and its env", n, calls)
	}

	broken := pluginAt(t, "echo not-a-credential")
	plugin, err := newExecPlugin(broken)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plugin.run(context.Background(), &syncBuffer{}); err == nil || !strings.Contains(err.Error(), "decoding stdout") {
		t.Errorf("broken answer: %v", err)
	}
}

// killProcess cleans up after a failed test.
func killProcess(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
