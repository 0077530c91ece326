package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kapply/kapply/internal/testcluster"
)

// hangingPluginKubeconfig is the test cluster's kubeconfig with contexts
// "good" (the test cluster's own user, in a new namespace) and "hangs",
// whose user's exec credential plugin never answers: a shell that starts
// `sleep 60` and waits, both pids written under dir.
func hangingPluginKubeconfig(t *testing.T, dir string) (kubeconfig, namespace string) {
	t.Helper()
	plugin := filepath.Join(dir, "hanging-plugin")
	script := "#!/bin/sh\necho waiting for a login >&2\necho $$ > " + filepath.Join(dir, "plugin.pid") + "\n" +
		"sleep 60 &\necho $! > " + filepath.Join(dir, "sleep.pid") + "\nwait\n"
	if err := os.WriteFile(plugin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.LoadFromFile(cluster.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	base := cfg.Contexts[cfg.CurrentContext]
	good := base.DeepCopy()
	good.Namespace = cluster.Namespace(t)
	hangs := base.DeepCopy()
	hangs.AuthInfo, hangs.Namespace = "hangs", good.Namespace
	cfg.Contexts["good"], cfg.Contexts["hangs"] = good, hangs
	cfg.AuthInfos["hangs"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
		Command: plugin, APIVersion: "client.authentication.k8s.io/v1", InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
	}}
	path := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path, good.Namespace
}

// pipedRun is kapply (the built binary) with stdout and stderr on one pipe,
// as `kapply ... 2>&1 | cat` runs it: when the pipe reached EOF, and what
// came through it.
type pipedRun struct {
	output   string
	eof      time.Duration // from the start; -1 if not within the limit
	exitCode int
}

// runPiped runs kapply with args, its stdout and stderr one pipe, and reads
// the pipe until EOF or limit; a run still holding it then is killed.
func runPiped(t *testing.T, limit time.Duration, args ...string) pipedRun {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command(builtKapply(t), args...)
	cmd.Stdout, cmd.Stderr, cmd.Stdin = w, w, nil
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	exited := make(chan int, 1)
	go func() {
		_ = cmd.Wait() // the exit code is what is wanted
		exited <- cmd.ProcessState.ExitCode()
	}()
	var out bytes.Buffer
	read := make(chan struct{})
	go func() {
		_, _ = io.Copy(&out, r) // EOF or the deferred close
		close(read)
	}()
	run := pipedRun{eof: -1}
	select {
	case <-read:
		run.eof = time.Since(start)
	case <-time.After(limit):
		_ = cmd.Process.Kill()
		r.Close()
		<-read
	}
	run.exitCode = <-exited
	run.output = out.String()
	return run
}

// pluginPIDs are the pids the hanging plugin wrote, waiting a little for
// the plugin to have started.
func pluginPIDs(t *testing.T, dir string) []int {
	t.Helper()
	var pids []int
	for _, name := range []string{"plugin.pid", "sleep.pid"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("the plugin did not run (%v): the test tests nothing", err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		pids = append(pids, pid)
	}
	return pids
}

// alive tells whether pid is a process that has not ended (a zombie has).
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, after, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(after, "Z") && !strings.HasPrefix(after, "X")
}

// assertPluginGone fails for each plugin process still alive, and kills it.
func assertPluginGone(t *testing.T, dir string) {
	t.Helper()
	for _, pid := range pluginPIDs(t, dir) {
		gone := false
		for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if !alive(pid) {
				gone = true
				break
			}
		}
		if !gone {
			t.Errorf("plugin process %d outlived kapply", pid)
			if p, err := os.FindProcess(pid); err == nil {
				_ = p.Kill()
			}
		}
	}
}

// TestHungExecPluginEndsWithClusterTimeout: with a context whose exec
// credential plugin never answers, `kapply apply --contexts good,hangs
// --cluster-timeout 3s 2>&1 | cat` applies to good, fails hangs as timed
// out, and the pipe reaches EOF within seconds of the timeout — no
// process of the plugin (the shell nor its sleep) is left holding it.
// client-go ran the plugin with kapply's stderr and left it running: the
// pipe stayed open for the plugin's 60 s.
func TestHungExecPluginEndsWithClusterTimeout(t *testing.T) {
	testcluster.Require(t, cluster)
	dir := t.TempDir()
	kubeconfig, ns := hangingPluginKubeconfig(t, dir)
	manifests := writeFiles(t, map[string]string{"a.yaml": labelledConfigMap("a", "app: x", "k: v")})
	run := runPiped(t, 40*time.Second, "apply", "-f", manifests, "--contexts", "good,hangs", "--cluster-timeout", "3s", "--kubeconfig", kubeconfig)
	if run.eof < 0 || run.eof > 15*time.Second {
		t.Errorf("the pipe reached EOF after %v (-1: not within 40s), want within seconds of the 3s timeout\n%s", run.eof, run.output)
	}
	if run.exitCode == 0 || !strings.Contains(run.output, "--cluster-timeout") {
		t.Errorf("exit %d, want hangs failed as timed out\n%s", run.exitCode, run.output)
	}
	if !strings.Contains(run.output, "configmap/a created") {
		t.Errorf("good was not applied\n%s", run.output)
	}
	if _, err := dynClient(t).Resource(configMaps).Namespace(ns).Get(context.Background(), "a", metav1.GetOptions{}); err != nil {
		t.Errorf("configmap a in good: %v", err)
	}
	t.Logf("EOF after %v:\n%s", run.eof, run.output)
	assertPluginGone(t, dir)
}

// TestHungExecPluginEndsCompletion: a completion (`kapply __complete ...
// 2>&1`) on the context whose plugin never answers ends within seconds
// of its own bound, and leaves no plugin process behind holding the pipe.
func TestHungExecPluginEndsCompletion(t *testing.T) {
	testcluster.Require(t, cluster)
	dir := t.TempDir()
	kubeconfig, _ := hangingPluginKubeconfig(t, dir)
	run := runPiped(t, 40*time.Second, "__complete", "--kubeconfig", kubeconfig, "--context", "hangs", "delete", "configmap", "")
	if run.eof < 0 || run.eof > completionTimeout+10*time.Second {
		t.Errorf("the pipe reached EOF after %v (-1: not within 40s), want within seconds of the completion's %v\n%s", run.eof, completionTimeout, run.output)
	}
	if run.exitCode != 0 || !strings.Contains(run.output, ":4") {
		t.Errorf("exit %d, want no values and the directive\n%s", run.exitCode, run.output)
	}
	assertPluginGone(t, dir)
}

// TestExecPluginClientCertificate: a plugin that answers with a client
// certificate (the test cluster's admin's) authenticates kapply's
// requests with it, on the server's own CA; the plugin runs once for the
// whole run (discovery, the mapper and the clients share its answer).
func TestExecPluginClientCertificate(t *testing.T) {
	testcluster.Require(t, cluster)
	cfg, err := clientcmd.LoadFromFile(cluster.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	user := cfg.AuthInfos[cfg.Contexts[cfg.CurrentContext].AuthInfo]
	if len(user.ClientCertificateData) == 0 {
		t.Skip("the test cluster's admin has no client certificate")
	}
	dir := t.TempDir()
	answer, err := json.Marshal(map[string]any{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
		"status": map[string]any{"clientCertificateData": string(user.ClientCertificateData), "clientKeyData": string(user.ClientKeyData)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "answer.json"), answer, 0o600); err != nil {
		t.Fatal(err)
	}
	plugin := filepath.Join(dir, "cert-plugin")
	script := "#!/bin/sh\necho ran >> " + filepath.Join(dir, "runs") + "\ncat " + filepath.Join(dir, "answer.json") + "\n"
	if err := os.WriteFile(plugin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	ns := cluster.Namespace(t)
	manifests := writeFiles(t, map[string]string{"a.yaml": labelledConfigMap("a", "app: x", "k: v")})
	r := kapplyArgs(t, "apply", "-f", manifests, "-n", ns, "--kubeconfig", execKubeconfig(t, plugin))
	if r.code != 0 || !strings.Contains(r.stdout, "configmap/a created") {
		t.Fatalf("apply with the plugin's certificate: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	runs, err := os.ReadFile(filepath.Join(dir, "runs"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(runs), "ran"); n != 1 {
		t.Errorf("the plugin ran %d times in one run, want once", n)
	}
}
