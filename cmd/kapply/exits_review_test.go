package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	"github.com/kapply/kapply/internal/testcluster"
)

// Regression tests of a hostile review of the exit-code fixes (print
// failures, prune 404s, --wait on deletion, --overwrite=false on a
// Secret's stringData, negative durations).

// forcedDeployments are n Deployments web0..web(n-1) whose selector (an
// immutable field) carries app, so that a second version needs --force.
func forcedDeployments(n int, app string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `apiVersion: apps/v1
kind: Deployment
metadata: {name: web%[1]d}
spec:
  selector: {matchLabels: {app: %[2]s, n: "%[1]d"}}
  template:
    metadata: {labels: {app: %[2]s, n: "%[1]d"}}
    spec: {containers: [{name: c, image: nginx}]}
---
`, i, app)
	}
	return b.String()
}

// runWithClosedPipe runs the kapply binary with stdout (or stderr) a pipe
// whose reader is gone, as `kapply apply ... | head -1` leaves it once head
// exits; the other stream is kept. It returns what the kept stream got and
// how the process ended.
func runWithClosedPipe(t *testing.T, closed string, args ...string) (kept string, state *os.ProcessState) {
	t.Helper()
	reader, writer, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := reader.Close(); err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	var buf bytes.Buffer
	cmd := exec.Command(builtKapply(t), append(args, "--kubeconfig", cluster.Kubeconfig)...)
	cmd.Stdout, cmd.Stderr = writer, &buf
	if closed == "stderr" {
		cmd.Stdout, cmd.Stderr = &buf, writer
	}
	// In-process runs of this test binary ignore SIGPIPE, and an ignored
	// signal stays ignored across exec: the child must ignore it itself.
	signal.Reset(syscall.SIGPIPE)
	err = cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running kapply: %v", err)
	}
	return buf.String(), cmd.ProcessState
}

// TestApplyForceSurvivesAClosedPipe: `kapply apply --force ... | head -1`.
// Go's default kills a process of SIGPIPE at its next write to a closed
// stdout or stderr, wherever the run is: objects are replaced
// concurrently, so the kill came between the delete and the create of
// some (2 of 40 Deployments were lost in 2 of 3 runs by hand, their copies
// left in the backup folder). The run now finishes: every object is
// replaced, the lines it could not print are errors, exit 1 (a closed
// stdout) — and with a closed stderr the run still applies everything.
func TestApplyForceSurvivesAClosedPipe(t *testing.T) {
	testcluster.Require(t, cluster)
	const n = 12
	for _, closed := range []string{"stdout", "stderr"} {
		t.Run(closed, func(t *testing.T) {
			forceBackupDir(t) // the child inherits XDG_CACHE_HOME
			ns := cluster.Namespace(t)
			before := writeFiles(t, map[string]string{"web.yaml": forcedDeployments(n, "a")})
			if r := kapply(t, "apply", "-f", before, "-n", ns); r.code != 0 {
				t.Fatalf("first apply: exit %d\n%s", r.code, r.stderr)
			}
			after := writeFiles(t, map[string]string{"web.yaml": forcedDeployments(n, "b")})
			kept, state := runWithClosedPipe(t, closed, "apply", "--force", "-f", after, "-n", ns)
			t.Logf("%s closed: %s\n%s", closed, state, kept)
			if status, ok := state.Sys().(syscall.WaitStatus); ok && status.Signaled() {
				t.Errorf("kapply was killed by %s: the run did not finish", status.Signal())
			}
			want := exitFailed // lines that could not be printed fail the run
			if closed == "stderr" {
				want = exitOK
			}
			if state.ExitCode() != want {
				t.Errorf("exit %d, want %d", state.ExitCode(), want)
			}
			if closed == "stdout" && !strings.Contains(kept, fmt.Sprintf("0 created, %d configured, 0 unchanged, 0 failed\n", n)) {
				t.Errorf("stderr lacks the summary of %d replaced objects", n)
			}
			if closed == "stdout" && !errorLineHasAll(kept, []string{"deployment.apps/web0", "configured, but printing it failed", "broken pipe"}) {
				t.Errorf("stderr lacks the error naming web0 not printed")
			}
			for i := range n {
				d, err := dynClient(t).Resource(deployments).Namespace(ns).Get(context.Background(), fmt.Sprintf("web%d", i), metav1.GetOptions{})
				if err != nil {
					t.Errorf("web%d: %v (lost by the replace)", i, err)
					continue
				}
				if app, _, _ := unstructured.NestedString(d.Object, "spec", "selector", "matchLabels", "app"); app != "b" {
					t.Errorf("web%d was not replaced by the file's version", i)
				}
			}
		})
	}
}

// TestOverwriteFalseTakesStringDataOverData: the server writes a Secret's
// stringData.KEY over data.KEY, so live data.KEY is what the record's
// stringData.KEY made it, whatever the record's data.KEY. Under
// --overwrite=false, with no other writer, kapply refused (exit 1, "data.k
// changed since the last apply") a file giving the key in both (even
// applied again unchanged) and a key moved from stringData to data. Both
// are applied now, with redacted and plain records; after another writer
// changes data.k, the next apply is refused, naming the field, no value.
func TestOverwriteFalseTakesStringDataOverData(t *testing.T) {
	testcluster.Require(t, cluster)
	secret := func(fields string) string {
		return "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\n" + fields
	}
	both := func(value string) string {
		return secret("data: {k: " + b64("data-value") + "}\nstringData: {k: " + value + "}\n")
	}
	binary := secret("data: {k: " + base64.StdEncoding.EncodeToString([]byte{0xff, 0x00, 0xfe}) + "}\n")
	for _, record := range []string{"redacted", "plain"} {
		t.Run(record, func(t *testing.T) {
			ns := cluster.Namespace(t)
			dir := writeFiles(t, map[string]string{"s.yaml": both("first-value")})
			apply := []string{"apply", "-f", dir, "-n", ns, "--secret-record=" + record, "--overwrite=false"}
			steps := []struct{ file, want string }{
				{both("first-value"), "secret/creds created\n"},
				{both("first-value"), "secret/creds unchanged\n"},
				{both("second-value"), "secret/creds configured\n"},
				{secret("stringData: {k: text-value}\n"), "secret/creds configured\n"},
				{binary, "secret/creds configured\n"},
			}
			for i, step := range steps {
				writeFile(t, dir, "s.yaml", step.file)
				if r := kapply(t, apply...); r.code != 0 || r.stdout != step.want {
					t.Errorf("step %d, no other writer: exit %d, want 0 and %q\n%s\n%s", i, r.code, step.want, r.stdout, r.stderr)
				}
			}
			writeFile(t, dir, "s.yaml", secret("stringData: {k: text-value}\n"))
			mustApply(t, dir, ns, "secret/creds configured\n")
			if _, err := dynClient(t).Resource(secrets).Namespace(ns).Patch(context.Background(), "creds", types.MergePatchType,
				[]byte(`{"data":{"k":"`+b64("other-writer")+`"}}`), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			writeFile(t, dir, "s.yaml", binary)
			r := kapply(t, apply...)
			want := []string{"secret/creds", "data.k changed since the last apply"}
			if r.code != exitFailed || !errorLineHasAll(r.stderr, want) || strings.Contains(r.stderr+r.stdout, "other-writer") {
				t.Errorf("after another writer: exit %d, want 1 and an error line with %q (no value)\n%s\n%s", r.code, want, r.stdout, r.stderr)
			}
		})
	}
}

// TestApplyWaitIgnoresAnObjectOfTheSameNameCreatedSince: between apply
// and the wait's first LIST, another client deletes the Deployment and
// creates one of the same name, which is ready at once (another UID). The
// wait took it for the applied one ("deployment.apps/web ready", exit 0);
// the object it waits for is gone: "failed: deleted while waiting", exit 1.
func TestApplyWaitIgnoresAnObjectOfTheSameNameCreatedSince(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"web.yaml": waitDeployment("web")})
	client := dynClient(t).Resource(deployments).Namespace(ns)
	replace := func() {
		ctx := context.Background()
		if err := client.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting web as another client: %v", err)
			return
		}
		var obj unstructured.Unstructured
		if err := yaml.Unmarshal([]byte(waitDeployment("web")), &obj.Object); err != nil {
			t.Fatal(err)
		}
		if _, err := client.Create(ctx, &obj, metav1.CreateOptions{}); err != nil {
			t.Errorf("creating web again: %v", err)
			return
		}
		if _, err := client.Patch(ctx, "web", types.MergePatchType, []byte(`{"status":`+availableStatus+`}`), metav1.PatchOptions{}, "status"); err != nil {
			t.Errorf("making the new web ready: %v", err)
		}
	}
	proxy := cluster.StartProxy(t)
	var created atomic.Bool
	var once sync.Once
	proxy.SetRule(func(req *http.Request, _ int64) testcluster.Fault {
		if !strings.HasSuffix(req.URL.Path, "/namespaces/"+ns+"/deployments") {
			return testcluster.Pass
		}
		switch {
		case req.Method == http.MethodPost:
			created.Store(true)
		case req.Method == http.MethodGet && created.Load() && req.URL.Query().Get("watch") != "true":
			once.Do(replace)
		}
		return testcluster.Pass
	})
	r := kapplyVia(t, proxy.Kubeconfig, "apply", "-f", dir, "-n", ns, "--wait", "--timeout=20s")
	t.Logf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	if r.code != exitFailed || strings.Contains(r.stdout, "ready") || !strings.Contains(r.stderr, "deployment.apps/web failed: deleted while waiting\n") {
		t.Errorf("exit %d, want 1 and web failed: deleted while waiting", r.code)
	}
}

// TestApplyWaitInterruptedExitsOne: a SIGINT during apply --wait ended
// the run with exit 2, where apply (as kubectl's) exits 1 on every error,
// and 1 for an interrupt while applying.
func TestApplyWaitInterruptedExitsOne(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"web.yaml": waitDeployment("web")})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := dynClient(t).Resource(deployments).Namespace(ns)
	go func() {
		// Once web is created, and the wait started: web is never ready,
		// no controller runs.
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if _, err := client.Get(ctx, "web", metav1.GetOptions{}); err == nil {
				break
			}
		}
		time.Sleep(time.Second)
		cancel()
	}()
	r := kapplyContext(t, ctx, "apply", "-f", dir, "-n", ns, "--wait", "--timeout=30s")
	t.Logf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	if r.code != exitFailed || !strings.Contains(r.stderr, "waiting for readiness: context canceled") {
		t.Errorf("exit %d, want 1 with the wait's error", r.code)
	}
}

// stdoutClosedAt refuses, as a closed pipe does, every write from the
// first one that contains after (a reader that went away once it had the
// lines before).
type stdoutClosedAt struct {
	after  string
	closed bool
	out    strings.Builder
}

func (w *stdoutClosedAt) Write(b []byte) (int, error) {
	if strings.Contains(string(b), w.after) {
		w.closed = true
	}
	if w.closed {
		return 0, syscall.EPIPE
	}
	return w.out.Write(b)
}

// TestApplyWaitExitsOneWhenAReadyLineIsLost: stdout closes once apply's
// line is read (`kapply apply --wait ... | head -1`). The wait's ready
// line was dropped silently, exit 0 — now that a closed stdout no longer
// kills the run; the other lines fail the run on a closed stdout. It is
// an error naming the object, exit 1.
func TestApplyWaitExitsOneWhenAReadyLineIsLost(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {a: b}\n"})
	out := &stdoutClosedAt{after: " ready\n"}
	var errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: bytes.NewReader(nil), Out: out, ErrOut: &errOut}
	code := exitCode(run([]string{"apply", "-f", dir, "-n", ns, "--wait", "--kubeconfig", cluster.Kubeconfig}, streams), &errOut)
	t.Logf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.out.String(), errOut.String())
	if out.out.String() != "configmap/cfg created\n" {
		t.Fatalf("stdout %q, want apply's line alone", out.out.String())
	}
	if want := []string{"configmap/cfg ready, but printing it failed", "broken pipe"}; code != exitFailed || !errorLineHasAll(errOut.String(), want) {
		t.Errorf("exit %d, want 1 and an error line with %q", code, want)
	}
}

// TestDeleteExitsOneOnABadClientConfig: a client configuration that
// cannot be built (--request-timeout=abc) made delete exit 2, where apply
// and kubectl's delete exit 1 (delete, as kubectl's, exits 1 on every
// error).
func TestDeleteExitsOneOnABadClientConfig(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\n"})
	for _, command := range []string{"apply", "delete"} {
		r := kapply(t, command, "-f", dir, "-n", ns, "--request-timeout=abc")
		if r.code != exitFailed || !strings.Contains(r.stderr, "Invalid timeout value") {
			t.Errorf("%s: exit %d, want 1 with client-go's error\n%s", command, r.code, r.stderr)
		}
	}
}

// TestDeleteWaitTimeoutZeroHasNoLimit: kubectl delete --timeout=0 waits
// "forever" (a week); kapply read 0 as its library's default, a minute,
// and failed an object still terminating after it. The wait's watch now
// asks the server for a week (its timeoutSeconds), and the delete succeeds
// once the object's finalizer goes.
func TestDeleteWaitTimeoutZeroHasNoLimit(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: held, finalizers: [example.com/hold]}\n"})
	if r := kapply(t, "apply", "-f", dir, "-n", ns); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.stderr)
	}
	client := dynClient(t).Resource(gvrOf("configmaps")).Namespace(ns)
	release := func() {
		time.Sleep(300 * time.Millisecond)
		if _, err := client.Patch(context.Background(), "held", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
			t.Errorf("removing the finalizer: %v", err)
		}
	}
	proxy := cluster.StartProxy(t)
	var asked atomic.Value
	var once sync.Once
	proxy.SetRule(func(req *http.Request, _ int64) testcluster.Fault {
		if strings.HasSuffix(req.URL.Path, "/namespaces/"+ns+"/configmaps") && req.URL.Query().Get("watch") == "true" {
			asked.Store(req.URL.Query().Get("timeoutSeconds"))
			once.Do(func() { go release() })
		}
		return testcluster.Pass
	})
	r := kapplyVia(t, proxy.Kubeconfig, "delete", "-f", dir, "-n", ns, "--wait", "--timeout=0")
	t.Logf("exit %d, watch timeoutSeconds %v\nstdout:\n%s\nstderr:\n%s", r.code, asked.Load(), r.stdout, r.stderr)
	if r.code != 0 {
		t.Errorf("exit %d, want 0", r.code)
	}
	seconds, _ := asked.Load().(string)
	if n, err := strconv.Atoi(seconds); err != nil || n < 7*24*3600 {
		t.Errorf("the wait asked the server for a watch of %q seconds, want a week", seconds)
	}
}
