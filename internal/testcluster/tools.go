package testcluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// InCI reports whether the tests run under CI=true, where `make test`
// provides every tool and input (the API server, kubectl v1.37, the
// real-world corpus, Chromium): there a missing one is a failure, not a
// skip, so that a run on a fresh clone never silently tests less.
func InCI() bool { return os.Getenv("CI") == "true" }

// Missing skips t because something it needs is not on this machine, or
// fails it under CI=true (see InCI).
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if InCI() {
		t.Fatalf("CI=true and %s (make test provides it)", msg)
	}
	t.Skip(msg)
}

// HaveKubectl reports whether kubectl is on PATH (`make test` puts
// bin/kubectlcmd, kubectl v1.37, first), for a test whose comparison with
// kubectl is one part among others; under CI=true a missing kubectl fails t.
func HaveKubectl(t testing.TB) bool {
	t.Helper()
	if _, err := exec.LookPath("kubectl"); err != nil {
		if InCI() {
			t.Fatalf("CI=true and kubectl not on PATH (make test provides it): %v", err)
		}
		t.Logf("kubectl not on PATH: the comparison with kubectl is skipped: %v", err)
		return false
	}
	return true
}

// Kubectl returns the kubectl on PATH the differential tests compare
// with; without one the test is skipped, or fails under CI=true.
func Kubectl(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("kubectl")
	if err != nil {
		Missing(t, "kubectl not on PATH: %v", err)
	}
	return path
}

// FindKubectl137 returns bin/kubectlcmd/kubectl, the kubectl of the API
// server's version that hack/kubectlcmd/build.sh builds, for tests that
// must not compare with another minor; "" when it is not built (a failure
// of t under CI=true).
func FindKubectl137(t testing.TB) string {
	t.Helper()
	path, err := kubectl137()
	if err != nil {
		if InCI() {
			t.Fatalf("CI=true and %v (make test provides it)", err)
		}
		t.Logf("%v", err)
		return ""
	}
	return path
}

// Kubectl137 is FindKubectl137 for a test that needs it: without it the
// test is skipped, or fails under CI=true.
func Kubectl137(t testing.TB) string {
	t.Helper()
	path, err := kubectl137()
	if err != nil {
		Missing(t, "%v", err)
	}
	return path
}

func kubectl137() (string, error) {
	dir, err := BinDir()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "kubectlcmd", "kubectl")
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("kubectl v1.37 not built (bin/kubectlcmd/kubectl; make kubectl-bin): %w", err)
	}
	return path, nil
}
