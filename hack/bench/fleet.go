package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kapply/kapply/internal/peakrss"
	"github.com/kapply/kapply/internal/testcluster"
)

// fleetServers is how many API servers -fleet starts.
const fleetServers = 3

// benchFleet (-fleet) measures kapply over many contexts on three API
// servers: -contexts contexts (each its own namespace) × -objects mixed
// objects in one run with --max-parallel=contexts, against three
// concurrent single-server runs holding the same objects (each its
// -contexts/3 namespaces in one tree) and a shell loop of `kapply apply
// --context` over the contexts; then the peak RSS with --max-parallel 5
// against --max-parallel=contexts, and with a third of the contexts.
func benchFleet(ctx context.Context, cfg config, work string, stdout, stderr io.Writer) (err error) {
	logf(stderr, "starting %d local clusters (work folder %s)", fleetServers, work)
	var servers []*testcluster.Cluster
	defer func() {
		for _, s := range servers {
			err = errors.Join(err, s.Stop())
		}
	}()
	for i := range fleetServers {
		s, err := testcluster.Start(filepath.Join(work, fmt.Sprintf("kubeconfig-%d", i)))
		if err != nil {
			return fmt.Errorf("starting local cluster %d: %w", i, err)
		}
		servers = append(servers, s)
		if err := createCRD(ctx, s.Config); err != nil {
			return err
		}
	}
	b := &fleetBench{cfg: cfg, work: work, servers: servers, stderr: stderr}
	defer func() {
		for _, p := range b.proxies {
			err = errors.Join(err, p.Close())
		}
	}()
	if err := b.writeTrees(); err != nil {
		return err
	}
	return b.run(ctx, stdout)
}

// fleetBench is one -fleet measurement.
type fleetBench struct {
	cfg     config
	work    string
	servers []*testcluster.Cluster
	stderr  io.Writer
	// kubeconfig holds every context of every set.
	kubeconfig *clientcmdapi.Config
	// proxies add -latency in front of each server.
	proxies []*latencyProxy
}

// fleetRun is one measured command's figures.
type fleetRun struct {
	label string
	took  time.Duration
	peak  int64
}

func (b *fleetBench) run(ctx context.Context, stdout io.Writer) error {
	n := b.cfg.contexts
	b.kubeconfig = clientcmdapi.NewConfig()
	for i, s := range b.servers {
		if err := b.addServer(fmt.Sprintf("server%d", i), s.Kubeconfig); err != nil {
			return err
		}
	}
	sets := map[string]int{"fleet": n, "fleet5": n, "third5": n / fleetServers, "loop": n}
	for set, count := range sets {
		if err := b.addContexts(ctx, set, count); err != nil {
			return err
		}
	}
	for i, s := range b.servers {
		if err := b.createNamespaces(ctx, s, singleNamespaces(n/fleetServers)); err != nil {
			return fmt.Errorf("server %d: %w", i, err)
		}
	}
	path := filepath.Join(b.work, "kubeconfig-fleet")
	if err := clientcmd.WriteToFile(*b.kubeconfig, path); err != nil {
		return fmt.Errorf("writing the kubeconfig: %w", err)
	}
	tree, single := filepath.Join(b.work, "fleet-tree"), filepath.Join(b.work, "single-tree")
	var runs []fleetRun
	measure := func(label string, fn func() (fleetRun, error)) error {
		logf(b.stderr, "%s", label)
		r, err := fn()
		r.label = label
		runs = append(runs, r)
		return err
	}
	steps := []struct {
		label string
		fn    func() (fleetRun, error)
	}{
		{fmt.Sprintf("fleet: %d contexts, --max-parallel %d", n, n), func() (fleetRun, error) {
			return b.kapply(ctx, path, "apply", "-f", tree, "-R", "--contexts", "fleet-*", "--max-parallel", fmt.Sprint(n))
		}},
		{fmt.Sprintf("3 concurrent single-server runs, %d objects each", b.cfg.objects*n/fleetServers), func() (fleetRun, error) {
			return b.concurrent(ctx, path, single)
		}},
		{fmt.Sprintf("shell loop: kapply apply --context, %d times", n), func() (fleetRun, error) {
			return b.loop(ctx, path, tree, "loop", n)
		}},
		{fmt.Sprintf("fleet: %d contexts, --max-parallel 5", n), func() (fleetRun, error) {
			return b.kapply(ctx, path, "apply", "-f", tree, "-R", "--contexts", "fleet5-*", "--max-parallel", "5")
		}},
		{fmt.Sprintf("fleet: %d contexts, --max-parallel 5", n/fleetServers), func() (fleetRun, error) {
			return b.kapply(ctx, path, "apply", "-f", tree, "-R", "--contexts", "third5-*", "--max-parallel", "5")
		}},
	}
	for _, s := range steps {
		if err := measure(s.label, s.fn); err != nil {
			return err
		}
	}
	return printFleet(stdout, runs)
}

// printFleet prints each run and the ratios the issue sets targets for.
func printFleet(w io.Writer, runs []fleetRun) error {
	var buf bytes.Buffer
	for _, r := range runs {
		peak := "-"
		if r.peak > 0 {
			peak = fmt.Sprintf("%d MiB", r.peak>>20)
		}
		fmt.Fprintf(&buf, "%-60s %8.2fs  peak %s\n", r.label, r.took.Seconds(), peak)
	}
	fleet, three, loop, mp5, third := runs[0], runs[1], runs[2], runs[3], runs[4]
	fmt.Fprintf(&buf, "fleet / 3 concurrent single-server runs: %.2fx (target <= 1.3x)\n", fleet.took.Seconds()/three.took.Seconds())
	fmt.Fprintf(&buf, "shell loop / fleet: %.2fx faster (target >= 5x)\n", loop.took.Seconds()/fleet.took.Seconds())
	fmt.Fprintf(&buf, "peak RSS --max-parallel %s: %.2fx of --max-parallel 5; 5 over all contexts: %.2fx of 5 over a third\n",
		"all", float64(fleet.peak)/float64(mp5.peak), float64(mp5.peak)/float64(third.peak))
	_, err := w.Write(buf.Bytes())
	return err
}

// kapply runs the kapply binary through peakrss and times it.
func (b *fleetBench) kapply(ctx context.Context, kubeconfig string, args ...string) (fleetRun, error) {
	args = append(args, "--kubeconfig", kubeconfig)
	m, err := peakrss.Command(ctx, b.cfg.kapply, args...)
	if err != nil {
		return fleetRun{}, err
	}
	var errOut bytes.Buffer
	m.Cmd.Stdout, m.Cmd.Stderr = io.Discard, &errOut
	start := time.Now()
	if err := m.Cmd.Run(); err != nil {
		return fleetRun{}, fmt.Errorf("kapply %v: %w\n%s", args, err, lastLines(errOut.String(), 20))
	}
	took := time.Since(start)
	peak, err := m.Peak()
	return fleetRun{took: took, peak: peak}, err
}

// concurrent runs one kapply per server at once, each applying the
// single-server tree (every namespace of that server's contexts).
func (b *fleetBench) concurrent(ctx context.Context, kubeconfig, tree string) (fleetRun, error) {
	start := time.Now()
	errs := make([]error, len(b.servers))
	var wg sync.WaitGroup
	for i := range b.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = b.kapply(ctx, kubeconfig, "apply", "-f", tree, "-R", "--context", fmt.Sprintf("server%d", i))
		}()
	}
	wg.Wait()
	return fleetRun{took: time.Since(start)}, errors.Join(errs...)
}

// loop is `for c in CONTEXTS; do kapply apply -f TREE --context $c; done`.
func (b *fleetBench) loop(ctx context.Context, kubeconfig, tree, set string, n int) (fleetRun, error) {
	script := `for c in "$@"; do "$KAPPLY" apply -f "$TREE" -R --context "$c" --kubeconfig "$KUBECONFIG_FILE" >/dev/null || exit 1; done`
	args := []string{"-c", script, "loop"}
	for i := range n {
		args = append(args, contextName(set, i))
	}
	cmd := exec.CommandContext(ctx, "bash", args...)
	cmd.Env = append(os.Environ(), "KAPPLY="+b.cfg.kapply, "TREE="+tree, "KUBECONFIG_FILE="+kubeconfig)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return fleetRun{}, fmt.Errorf("the shell loop: %w\n%s", err, lastLines(errOut.String(), 20))
	}
	return fleetRun{took: time.Since(start)}, nil
}
