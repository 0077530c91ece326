package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kapply/kapply/internal/peakrss"
	"github.com/kapply/kapply/internal/testcluster"
)

var cluster *testcluster.Cluster

func TestMain(m *testing.M) {
	peakrss.ServeRunner()
	os.Exit(testcluster.Main(m, &cluster))
}

// result is what one kapply invocation printed and its exit code.
type result struct {
	stdout, stderr string
	code           int
}

// kapply runs the CLI in-process against the test cluster, with an empty
// stdin.
func kapply(t *testing.T, args ...string) result {
	t.Helper()
	return kapplyWith(run, bytes.NewReader(nil), args...)
}

// kapplyWithStdin is kapply reading stdin for "-f -".
func kapplyWithStdin(t *testing.T, stdin io.Reader, args ...string) result {
	t.Helper()
	return kapplyWith(run, stdin, args...)
}

// kapplyContext runs the CLI in-process against the test cluster until ctx
// ends, as a first SIGINT ends the run.
func kapplyContext(t *testing.T, ctx context.Context, args ...string) result {
	t.Helper()
	return kapplyWith(func(args []string, streams genericiooptions.IOStreams) error {
		return runContext(ctx, args, streams)
	}, bytes.NewReader(nil), args...)
}

func kapplyWith(runFn func([]string, genericiooptions.IOStreams) error, stdin io.Reader, args ...string) result {
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: stdin, Out: &out, ErrOut: &errOut}
	args = append(args, "--kubeconfig", cluster.Kubeconfig)
	code := exitCode(runFn(args, streams), &errOut)
	return result{stdout: out.String(), stderr: errOut.String(), code: code}
}

// writeFiles writes name → content under a new temporary directory.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// kapplyNoCluster runs the CLI without pointing it at the test cluster.
func kapplyNoCluster(t *testing.T, out *strings.Builder, args ...string) int {
	t.Helper()
	var errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: bytes.NewReader(nil), Out: out, ErrOut: &errOut}
	return exitCode(run(args, streams), &errOut)
}
