package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kapply/kapply/internal/testcluster"
)

// TestKubercAliasOfAViewKapplyLacksWritesNothing: a kuberc alias written
// for kubectl's read-only `apply view-last-applied` is refused by kapply,
// whose apply has no such subcommand; kubectl's loader stopped at kapply's
// apply, dropped the rest of the alias's command, and the alias created
// the file's objects.
func TestKubercAliasOfAViewKapplyLacksWritesNothing(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{
		"cm.yaml": labelledConfigMap("viewed", "app: x", "k: v"),
		"kuberc": "apiVersion: kubectl.config.k8s.io/v1beta1\nkind: Preference\naliases:\n" +
			"- name: view\n  command: apply view-last-applied\n",
	})
	r := kapply(t, "view", "-f", filepath.Join(dir, "cm.yaml"), "-n", ns, "--kuberc", filepath.Join(dir, "kuberc"))
	if r.code == 0 || !strings.Contains(r.stderr, `kapply has no command "apply view-last-applied"`) {
		t.Errorf("alias of apply view-last-applied: exit %d, want refused\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if configMapExists(t, ns, "viewed") {
		t.Errorf("alias of apply view-last-applied created the ConfigMap")
	}
}

// TestKubercFromAFIFOIsReadOnce: a kuberc given as a FIFO (a shell's
// --kuberc <(...)) is read once, and its default --dry-run=server holds:
// kapply's look-ahead read the FIFO, kubectl's loader then read nothing,
// and the apply wrote the object. A kuberc that never ends (/dev/zero) is
// refused after maxKubercSize instead of growing the process without
// bound.
func TestKubercFromAFIFOIsReadOnce(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"cm.yaml": labelledConfigMap("dry", "app: x", "k: v")})
	fifo := filepath.Join(t.TempDir(), "kuberc")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		rc := "apiVersion: kubectl.config.k8s.io/v1beta1\nkind: Preference\ndefaults:\n" +
			"- command: apply\n  options:\n  - name: dry-run\n    default: server\n"
		_ = os.WriteFile(fifo, []byte(rc), 0) // blocks until kapply opens the FIFO
	}()
	r := runWithin(t, 30*time.Second, func() result {
		return kapply(t, "apply", "-f", filepath.Join(dir, "cm.yaml"), "-n", ns, "--kuberc", fifo)
	})
	if r.code != 0 || r.stdout != "configmap/dry created (server dry run)\n" {
		t.Errorf("kuberc from a FIFO: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if configMapExists(t, ns, "dry") {
		t.Errorf("the kuberc's --dry-run=server was dropped: the ConfigMap was created")
	}
	t.Setenv("KUBERC", "/dev/zero")
	r = runWithin(t, 30*time.Second, func() result { return kapply(t, "apply", "-f", filepath.Join(dir, "cm.yaml"), "-n", ns) })
	if r.code == 0 || !strings.Contains(r.stderr, "reading /dev/zero: larger than 1 MiB, the most kapply reads from a kuberc") || configMapExists(t, ns, "dry") {
		t.Errorf("KUBERC=/dev/zero: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
