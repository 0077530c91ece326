package fleet_test

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/kapply/kapply/internal/testcluster"
)

// servers are two API servers (each its own etcd) for ExampleRun and the
// tests that run over several clusters; nil with -short and no binaries.
var servers []*testcluster.Cluster

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	flag.Parse()
	started, err := startServers(2)
	defer stopServers(started)
	switch {
	case errors.Is(err, testcluster.ErrNoBinaries) && testing.Short():
		fmt.Fprintln(os.Stderr, "fleet:", err, "- integration tests skipped (-short)")
		// ExampleRun applies to the servers and cannot skip itself.
		if err := flag.Set("test.skip", "^ExampleRun$"); err != nil {
			fmt.Fprintln(os.Stderr, "fleet:", err)
		}
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
