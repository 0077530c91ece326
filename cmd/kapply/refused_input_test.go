package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kapply/kapply/internal/testcluster"
)

// TestDiffRefusesAnExternalDiffThatRunsAScript: KUBECTL_EXTERNAL_DIFF
// 'sh -c touch${IFS}FILE' would have sh run its argument; kapply takes, as
// kubectl does, a program and simple flags only, and refuses the rest with
// an error (exit 2) before anything runs.
func TestDiffRefusesAnExternalDiffThatRunsAScript(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {a: \"1\"}\n"})
	marker := filepath.Join(t.TempDir(), "x")
	t.Setenv(kapplyExternalDiff, "")
	t.Setenv(kubectlExternalDiff, "sh -c touch${IFS}"+marker)
	r := kapply(t, "diff", "-f", dir, "-n", ns)
	if r.code != exitError || !strings.Contains(r.stderr, `argument "touch${IFS}`+marker+`" is not allowed`) {
		t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, exitError, r.stdout, r.stderr)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("the external diff's argument ran: %s exists", marker)
	}
	t.Setenv(kubectlExternalDiff, "diff -u -N")
	if r := kapply(t, "diff", "-f", dir, "-n", ns); r.code != exitDifferences || !strings.Contains(r.stdout, "+  a: \"1\"") {
		t.Errorf("simple flags: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestApplyRefusesAMalformedMergeKey: a version with a slash (or any the
// server could not serve) would match no kind and be ignored; apply and
// diff refuse it with an error that names the flag's value, and apply
// nothing.
func TestApplyRefusesAMalformedMergeKey(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n"})
	for _, key := range []string{"Widget.example.com/v1/x:spec=a", "Widget.example.com/:spec=a", "Widget.Example_com:spec=a"} {
		for _, command := range []string{"apply", "diff"} {
			// kubectl's exit codes: apply 1 on any error, diff 2.
			want := map[string]int{"apply": exitFailed, "diff": exitError}[command]
			r := kapply(t, command, "-f", dir, "-n", ns, "--merge-key", key)
			if r.code != want || !strings.Contains(r.stderr, `"`+key+`"`) {
				t.Errorf("%s --merge-key %s: exit %d, want %d with the value named\n%s", command, key, r.code, want, r.stderr)
			}
		}
	}
	if got := liveConfigMaps(t, ns); len(got) != 0 {
		t.Errorf("a run with a malformed --merge-key applied %v", got)
	}
}
