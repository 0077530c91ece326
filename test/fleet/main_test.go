package fleet_test

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/kapply/kapply/internal/testcluster"
)

var (
	// servers are three API servers (each its own etcd); contexts of the
	// tests point at them in turn.
	servers []*testcluster.Cluster
	// kapplyBin is the kapply binary built for this run, driven as a
	// user's script would drive it.
	kapplyBin string
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	flag.Parse()
	dir, err := os.MkdirTemp("", "kapply-fleet-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleet:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	kapplyBin = filepath.Join(dir, "kapply")
	build := exec.Command("go", "build", "-o", kapplyBin, "github.com/kapply/kapply/cmd/kapply")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "fleet: building kapply:", err)
		return 1
	}
	started, err := startServers(3)
	defer stopServers(started)
	switch {
	case errors.Is(err, testcluster.ErrNoBinaries) && testing.Short():
		fmt.Fprintln(os.Stderr, "fleet:", err, "- integration tests skipped (-short)")
	case err != nil:
		fmt.Fprintln(os.Stderr, "fleet:", err)
		return 1
	default:
		servers = started
	}
	return m.Run()
}

// startServers starts n API servers at once.
func startServers(n int) ([]*testcluster.Cluster, error) {
	started := make([]*testcluster.Cluster, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			started[i], errs[i] = testcluster.Start("")
		}()
	}
	wg.Wait()
	var ok []*testcluster.Cluster
	for _, c := range started {
		if c != nil {
			ok = append(ok, c)
		}
	}
	return ok, errors.Join(errs...)
}

func stopServers(started []*testcluster.Cluster) {
	for _, c := range started {
		if err := c.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "fleet:", err)
		}
		if err := os.Remove(c.Kubeconfig); err != nil {
			fmt.Fprintln(os.Stderr, "fleet:", err)
		}
	}
}

// requireServers skips the test when the servers could not start (-short
// without binaries only).
func requireServers(t *testing.T) {
	t.Helper()
	if len(servers) < 3 {
		t.Skip("no local API servers: run `make k8s-bin` (integration test skipped with -short)")
	}
}
