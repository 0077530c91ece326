package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// lockedBuffer is a bytes.Buffer a test reads while a run writes it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

const prompt = "Continue? [y/N] "

// kapplyOnTerminal runs kapply in process with stdin the terminal side of
// a new pseudo-terminal; once kapply asks, atPrompt runs and answer is
// typed on the terminal.
func kapplyOnTerminal(t *testing.T, answer string, atPrompt func(), args ...string) result {
	t.Helper()
	return kapplyOnTerminalWith(t, cluster.Kubeconfig, answer, atPrompt, args...)
}

// kapplyOnTerminalWith is kapplyOnTerminal with another kubeconfig.
func kapplyOnTerminalWith(t *testing.T, kubeconfig, answer string, atPrompt func(), args ...string) result {
	t.Helper()
	ptm, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptm.Close()
	defer tty.Close()
	go func() { _, _ = bytes.NewBuffer(nil).ReadFrom(ptm) }() // the echo
	var out, errOut lockedBuffer
	streams := genericiooptions.IOStreams{In: tty, Out: &out, ErrOut: &errOut}
	done := make(chan int, 1)
	go func() {
		var stderr bytes.Buffer
		code := exitCode(run(append(args, "--kubeconfig", kubeconfig), streams), &stderr)
		errOut.Write(stderr.Bytes())
		done <- code
	}()
	deadline := time.After(2 * time.Minute)
	for !strings.Contains(out.String(), prompt) {
		select {
		case code := <-done:
			t.Fatalf("kapply ended without asking: exit %d\nstdout %s\nstderr %s", code, out.String(), errOut.String())
		case <-deadline:
			t.Fatalf("kapply did not ask within 2 minutes\nstdout %s\nstderr %s", out.String(), errOut.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if atPrompt != nil {
		atPrompt()
	}
	if _, err := ptm.Write([]byte(answer + "\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		return result{stdout: out.String(), stderr: errOut.String(), code: code}
	case <-time.After(2 * time.Minute):
		t.Fatalf("kapply did not end within 2 minutes of the answer\nstdout %s\nstderr %s", out.String(), errOut.String())
	}
	return result{}
}

// TestConfirmYesExecutesThePlanShown: apply --confirm shows the plan as a
// table and asks on the terminal; "y" executes the plan shown, not a new
// one: an object changed by another writer while the question waited is
// refused (the change kept, a diff printed), the other is created.
func TestConfirmYesExecutesThePlanShown(t *testing.T) {
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"moved.yaml": configMapYAML("moved", "mode", "fast")})
	mustRunKapply(t, "apply", "-f", dir, "-n", ns)
	writeFile(t, dir, "moved.yaml", configMapYAML("moved", "mode", "slow"))
	writeFile(t, dir, "fresh.yaml", configMapYAML("fresh", "k", "v"))
	cms := dynamicClient(t).Resource(configMaps).Namespace(ns)
	r := kapplyOnTerminal(t, "y", func() {
		if _, err := cms.Patch(context.Background(), "moved", types.MergePatchType, []byte(`{"data":{"mode":"other"}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}, "apply", "--confirm", "-f", dir, "-n", ns)
	table := r.stdout[:strings.Index(r.stdout, prompt)]
	for _, want := range []string{"NAMESPACE", "KIND", "NAME", "OPERATION", "FIELDS", "REASON", "fresh", "create", "moved", "patch", "data.mode"} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}
	if r.code != 1 || !strings.Contains(r.stdout, "configmap/fresh created") || !strings.Contains(r.stderr, "changed since the plan: data.mode") || !strings.Contains(r.stderr, "+data.mode: other") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if got := configMapData(t, ns, "moved")["mode"]; got != "other" {
		t.Errorf("moved's mode = %v: the run planned again instead of executing the plan shown", got)
	}
	if got := configMapData(t, ns, "fresh")["k"]; got != "v" {
		t.Errorf("fresh's k = %v, want v", got)
	}
}

// TestConfirmNoWritesNothing: "n" (and anything but y) writes nothing and
// exits 1, saying so on stderr, so that `apply -i && next-step` stops.
func TestConfirmNoWritesNothing(t *testing.T) {
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"cm.yaml": configMapYAML("cm", "k", "v")})
	r := kapplyOnTerminal(t, "n", nil, "apply", "-i", "-f", dir, "-n", ns)
	if r.code != 1 || r.stderr != "apply declined: nothing written\n" {
		t.Errorf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if _, err := dynamicClient(t).Resource(configMaps).Namespace(ns).Get(context.Background(), "cm", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("answered n, but the ConfigMap was written (%v)", err)
	}
}

// runDetached runs the built kapply in a new session: with tty (the
// terminal side of a pty) as its controlling terminal when given, none
// otherwise; stdin is given separately.
func runDetached(t *testing.T, stdin string, tty *os.File, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(builtKapply(t), append(args, "--kubeconfig", cluster.Kubeconfig)...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if tty != nil {
		cmd.ExtraFiles = []*os.File{tty} // fd 3 in the child
		cmd.SysProcAttr.Setctty, cmd.SysProcAttr.Ctty = true, 3
	}
	return cmd
}

func resultOf(t *testing.T, cmd *exec.Cmd, err error, out, errOut *lockedBuffer) result {
	t.Helper()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	r := result{stdout: out.String(), stderr: errOut.String()}
	if exit != nil {
		r.code = exit.ExitCode()
	}
	return r
}

// TestConfirmWithoutTerminalRefuses: with no terminal to ask on (stdin a
// pipe, no controlling terminal) --confirm refuses, exit 1, nothing
// written; --yes applies the plan shown without asking.
func TestConfirmWithoutTerminalRefuses(t *testing.T) {
	ns := cluster.Namespace(t)
	objects := configMapYAML("cm", "k", "v")
	var out, errOut lockedBuffer
	cmd := runDetached(t, objects, nil, "apply", "--confirm", "-f", "-", "-n", ns)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	r := resultOf(t, cmd, cmd.Run(), &out, &errOut)
	if r.code != 1 || !strings.Contains(r.stderr, "error: --confirm needs a terminal to ask on") {
		t.Errorf("no terminal: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	cms := dynamicClient(t).Resource(configMaps).Namespace(ns)
	if _, err := cms.Get(context.Background(), "cm", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("refused, but the ConfigMap was written (%v)", err)
	}
	r = kapplyWithStdin(t, strings.NewReader(objects), "apply", "--confirm", "--yes", "-f", "-", "-n", ns)
	if r.code != 0 || !strings.Contains(r.stdout, "OPERATION") || !strings.Contains(r.stdout, "configmap/cm created") {
		t.Errorf("--yes: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
}

// TestConfirmReadsTerminalWhenStdinCarriesFiles: with -f - the files come
// on stdin and the answer from the controlling terminal (/dev/tty).
func TestConfirmReadsTerminalWhenStdinCarriesFiles(t *testing.T) {
	ns := cluster.Namespace(t)
	ptm, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptm.Close()
	var out, errOut lockedBuffer
	cmd := runDetached(t, configMapYAML("cm", "k", "v"), tty, "apply", "--confirm", "-f", "-", "-n", ns)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	go func() { _, _ = bytes.NewBuffer(nil).ReadFrom(ptm) }() // the echo
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(out.String(), prompt) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := ptm.Write([]byte("y\n")); err != nil {
		t.Fatal(err)
	}
	r := resultOf(t, cmd, cmd.Wait(), &out, &errOut)
	if r.code != 0 || !strings.Contains(r.stdout, "configmap/cm created") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if got := configMapData(t, ns, "cm")["k"]; got != "v" {
		t.Errorf("cm's k = %v, want v", got)
	}
}
