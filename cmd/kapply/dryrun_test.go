package main

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapply/kapply/internal/testcluster"
)

// TestBareDryRunEveryCommand: every command with --dry-run reads it as
// kubectl 1.37's GetDryRunStrategy: bare or "true" is a client dry run with
// kubectl's deprecation warning, "false" none. delete and last-applied set
// (kubectl's apply set-last-applied) print what kubectl prints; adopt,
// release and migrate, kapply's own, follow the same rule. Nothing is written.
func TestBareDryRunEveryCommand(t *testing.T) {
	testcluster.Require(t, cluster)
	requireKubectl(t)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {a: \"1\"}\n"})
	mustApply(t, dir, ns, "configmap/cm created\n")
	// adopt takes an object without a record.
	bare := writeFiles(t, map[string]string{"bare.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bare}\n"})
	if k := kubectlRun(t, "", "create", "-f", bare, "-n", ns); k.code != 0 {
		t.Fatalf("kubectl create: %s", k.stderr)
	}
	writeFile(t, dir, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {a: \"2\"}\n")
	before := configMapVersion(t, ns, "cm")
	commands := map[string][]string{
		"delete":           {"delete", "-f", dir, "-n", ns},
		"last-applied set": {"last-applied", "set", "-f", dir, "-n", ns},
		"adopt":            {"adopt", "-f", bare, "-n", ns},
		"release":          {"release", "-f", dir, "-n", ns, "--field", "data.a"},
		"migrate":          {"migrate", "--to=server-side", "-f", dir, "-n", ns},
	}
	kubectlArgs := map[string][]string{
		"delete":           {"delete", "-f", dir, "-n", ns},
		"last-applied set": {"apply", "set-last-applied", "-f", dir, "-n", ns},
	}
	for name, args := range commands {
		for flag, warning := range map[string]string{
			"--dry-run":      "Warning: --dry-run is deprecated and can be replaced with --dry-run=client.\n",
			"--dry-run=true": "Warning: --dry-run=true is deprecated (boolean value) and can be replaced with --dry-run=client.\n",
		} {
			r := kapply(t, append(args, flag)...)
			if r.code != 0 || !strings.HasPrefix(r.stderr, warning) || !strings.Contains(r.stdout, "(dry run)") {
				t.Errorf("%s %s: exit %d, want 0, a client dry run line and %q first on stderr\nstdout:\n%s\nstderr:\n%s", name, flag, r.code, warning, r.stdout, r.stderr)
			}
			if k, ok := kubectlArgs[name]; ok {
				theirs := kubectlRun(t, "", append(k, flag)...)
				if theirs.code != r.code || !strings.Contains(theirs.stderr, strings.TrimPrefix(warning, "Warning: ")) {
					t.Errorf("kubectl %s %s: exit %d (kapply %d)\n%s", name, flag, theirs.code, r.code, theirs.stderr)
				}
				if !strings.Contains(theirs.stdout, "(dry run)") {
					t.Errorf("kubectl %s %s printed %q", name, flag, theirs.stdout)
				}
			}
		}
		if r := kapply(t, append(args, "--dry-run=maybe")...); r.code == 0 || !strings.Contains(r.stderr, `Invalid dry-run value (maybe). Must be "none", "server", or "client".`) {
			t.Errorf("%s --dry-run=maybe: exit %d\n%s", name, r.code, r.stderr)
		}
	}
	if after := configMapVersion(t, ns, "cm"); after != before {
		t.Errorf("a dry run wrote: resourceVersion %s before, %s after", before, after)
	}
}

func configMapVersion(t *testing.T, ns, name string) string {
	t.Helper()
	live, err := dynClient(t).Resource(configMaps).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return live.GetResourceVersion()
}
