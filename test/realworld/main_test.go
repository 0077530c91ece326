package realworld_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/kapply/kapply/internal/testcluster"
)

var (
	// cluster is the API server the projects are applied to, one after
	// another; each project is deleted before the next one starts.
	cluster *testcluster.Cluster
	// kapplyBin is the kapply binary built for this run: the tests drive it
	// as a user's script would, exit codes and all.
	kapplyBin string
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "kapply-realworld-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, "realworld:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	kapplyBin = filepath.Join(dir, "kapply")
	build := exec.Command("go", "build", "-o", kapplyBin, "github.com/kapply/kapply/cmd/kapply")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "realworld: building kapply:", err)
		return 1
	}
	return testcluster.Main(m, &cluster)
}
