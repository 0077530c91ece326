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
	"strings"
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
// --context` over the contexts: after an untimed warm-up, -runs creates
// of each (new contexts and namespaces each time), then -runs re-applies,
// the arms taking turns at going first; then the peak RSS by
// --max-parallel and by the number of contexts (see fleetMemory).
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
	// kubeconfig holds every context of every set; path is its file.
	kubeconfig *clientcmdapi.Config
	path       string
	// proxies add -latency in front of each server.
	proxies []*latencyProxy
	// profiles counts the CPU profiles written (-profile).
	profiles int
}

// fleetRun is one measured command's figures.
type fleetRun struct {
	label string
	took  time.Duration
	peak  int64
	// cpu is the user+system time of the commands (kapply and a shell),
	// server that of the API servers and etcds during the run.
	cpu, server time.Duration
}

// fleetArm is one way of applying the fleet's objects, measured first as a
// create, then as re-applies.
type fleetArm struct {
	name string
	run  func() (fleetRun, error)
}

// memorySets are the context sets fleetMemory creates, by size.
var memorySets = []int{10, 30, 60}

func (b *fleetBench) run(ctx context.Context, stdout io.Writer) error {
	if err := b.writeKubeconfig(ctx); err != nil {
		return err
	}
	tree := filepath.Join(b.work, "fleet-tree")
	if b.cfg.hold {
		logf(b.stderr, "holding: --kubeconfig %s, contexts fleetN-*, loopN-*, mem*-*, warm-* and server0..2 (trees in %s); interrupt to stop", b.path, b.work)
		<-ctx.Done()
		return nil
	}
	if err := b.warmUp(ctx, tree); err != nil {
		return err
	}
	// Each repetition creates in contexts and namespaces of its own, then
	// the first repetition's objects are re-applied; the arms take turns
	// at going first.
	create, reapply := make([][]fleetRun, 3), make([][]fleetRun, 3)
	for rep := range b.cfg.runs {
		if err := b.rotate(b.arms(ctx, tree, rep), rep, "create", create); err != nil {
			return err
		}
	}
	for rep := range b.cfg.runs {
		if err := b.rotate(b.arms(ctx, tree, 0), rep, "re-apply", reapply); err != nil {
			return err
		}
	}
	var memory []memoryRow
	if !b.cfg.skipMemory {
		var err error
		if memory, err = b.fleetMemory(ctx, tree); err != nil {
			return err
		}
	}
	return printFleet(stdout, b.cfg, create, reapply, memory)
}

// rotate measures each arm once, starting with arm rep (mod 3), and
// appends its figures to runs[arm].
func (b *fleetBench) rotate(arms []fleetArm, rep int, phase string, runs [][]fleetRun) error {
	for k := range arms {
		i := (k + rep) % len(arms)
		r, err := b.measure(fmt.Sprintf("%s (%s %d)", arms[i].name, phase, rep+1), arms[i].run)
		if err != nil {
			return err
		}
		runs[i] = append(runs[i], r)
	}
	return nil
}

// arms are the three ways of applying the objects of repetition rep,
// each in contexts or namespaces of its own: one kapply over the contexts,
// three concurrent single-server runs, and a shell loop.
func (b *fleetBench) arms(ctx context.Context, tree string, rep int) []fleetArm {
	n := b.cfg.contexts
	fleet, loop := fmt.Sprintf("fleet%d", rep), fmt.Sprintf("loop%d", rep)
	return []fleetArm{
		{fmt.Sprintf("fleet: %d contexts, --max-parallel %d", n, n), func() (fleetRun, error) {
			return b.kapply(ctx, "apply", "-f", tree, "-R", "--contexts", fleet+"-*", "--max-parallel", fmt.Sprint(n))
		}},
		{fmt.Sprintf("3 concurrent single-server runs, %d objects each", b.cfg.objects*n/fleetServers), func() (fleetRun, error) {
			return b.concurrent(ctx, b.singleTree(rep))
		}},
		{fmt.Sprintf("shell loop: kapply apply --context, %d times", n), func() (fleetRun, error) {
			return b.loop(ctx, tree, loop, n)
		}},
	}
}

// warmUp creates and re-applies the tree in one context per server,
// untimed: the first arm measured would otherwise pay alone for servers
// that just started (their heaps and caches growing) and for kapply's
// empty discovery and OpenAPI caches on disk, which every later run reads.
func (b *fleetBench) warmUp(ctx context.Context, tree string) error {
	for _, phase := range []string{"create", "re-apply"} {
		logf(b.stderr, "warming up: %s in one context per server (not measured)", phase)
		if _, err := b.kapply(ctx, "apply", "-f", tree, "-R", "--contexts", "warm-*"); err != nil {
			return err
		}
	}
	return nil
}

// memoryRow is one memory measurement, repeated -runs times.
type memoryRow struct {
	label string
	runs  []fleetRun
}

// fleetMemory measures peak RSS by --max-parallel (1, 5, 10, all) over the
// fleet's contexts, re-applying; then by the number of contexts with
// --max-parallel 5: each memory set created once, then re-applied. The
// re-applies are repeated -runs times, alternated: a peak depends on when
// the collector ran, so single figures move by a fifth.
func (b *fleetBench) fleetMemory(ctx context.Context, tree string) ([]memoryRow, error) {
	n := b.cfg.contexts
	var rows []memoryRow
	type step struct {
		label string
		args  []string
	}
	var steps []step
	for _, mp := range []int{1, 5, 10, n} {
		steps = append(steps, step{fmt.Sprintf("fleet: %d contexts, --max-parallel %d (re-apply)", n, mp), []string{"--contexts", "fleet0-*", "--max-parallel", fmt.Sprint(mp)}})
	}
	for _, size := range memorySets {
		set := []string{"--contexts", fmt.Sprintf("mem%d-*", size), "--max-parallel", "5"}
		r, err := b.measure(fmt.Sprintf("%d contexts, --max-parallel 5 (create)", size), func() (fleetRun, error) {
			return b.kapply(ctx, append([]string{"apply", "-f", tree, "-R"}, set...)...)
		})
		if err != nil {
			return nil, err
		}
		rows = append(rows, memoryRow{label: r.label, runs: []fleetRun{r}})
		steps = append(steps, step{fmt.Sprintf("%d contexts, --max-parallel 5 (re-apply)", size), set})
	}
	first := len(rows)
	for _, s := range steps {
		rows = append(rows, memoryRow{label: s.label})
	}
	for range b.cfg.runs {
		for i, s := range steps {
			r, err := b.measure(s.label, func() (fleetRun, error) {
				return b.kapply(ctx, append([]string{"apply", "-f", tree, "-R"}, s.args...)...)
			})
			if err != nil {
				return nil, err
			}
			rows[first+i].runs = append(rows[first+i].runs, r)
		}
	}
	return rows, nil
}

// writeKubeconfig writes one kubeconfig with a context per server and
// every set's contexts, each with its namespace created.
func (b *fleetBench) writeKubeconfig(ctx context.Context) error {
	n := b.cfg.contexts
	b.kubeconfig = clientcmdapi.NewConfig()
	for i, s := range b.servers {
		if err := b.addServer(fmt.Sprintf("server%d", i), s.Kubeconfig); err != nil {
			return err
		}
	}
	sets := map[string]int{"warm": fleetServers}
	for rep := range b.cfg.runs {
		sets[fmt.Sprintf("fleet%d", rep)], sets[fmt.Sprintf("loop%d", rep)] = n, n
	}
	if !b.cfg.skipMemory {
		for _, size := range memorySets {
			sets[fmt.Sprintf("mem%d", size)] = size
		}
	}
	for set, count := range sets {
		if err := b.addContexts(ctx, set, count); err != nil {
			return err
		}
	}
	for i, s := range b.servers {
		for rep := range b.cfg.runs {
			if err := b.createNamespaces(ctx, s, singleNamespaces(rep, n/fleetServers)); err != nil {
				return fmt.Errorf("server %d: %w", i, err)
			}
		}
	}
	b.path = filepath.Join(b.work, "kubeconfig-fleet")
	if err := clientcmd.WriteToFile(*b.kubeconfig, b.path); err != nil {
		return fmt.Errorf("writing the kubeconfig: %w", err)
	}
	return nil
}

// measure runs fn, with the servers' CPU time around it.
func (b *fleetBench) measure(label string, fn func() (fleetRun, error)) (fleetRun, error) {
	logf(b.stderr, "%s", label)
	before, err := serverCPU()
	if err != nil {
		return fleetRun{}, err
	}
	r, err := fn()
	if err != nil {
		return fleetRun{}, err
	}
	after, err := serverCPU()
	r.label, r.server = label, after-before
	return r, err
}

// kapply runs the kapply binary through peakrss and times it.
func (b *fleetBench) kapply(ctx context.Context, args ...string) (fleetRun, error) {
	args = append(args, "--kubeconfig", b.path)
	m, err := peakrss.Command(ctx, b.cfg.kapply, args...)
	if err != nil {
		return fleetRun{}, err
	}
	var errOut bytes.Buffer
	m.Cmd.Stdout, m.Cmd.Stderr = io.Discard, &errOut
	m.Cmd.Env = append(m.Cmd.Env, b.profileEnv()...)
	start := time.Now()
	if err := m.Cmd.Run(); err != nil {
		return fleetRun{}, fmt.Errorf("kapply %v: %w\n%s", args, err, lastLines(errOut.String(), 20))
	}
	took := time.Since(start)
	peak, err := m.Peak()
	return fleetRun{took: took, peak: peak, cpu: cpuOf(m.Cmd)}, err
}

// profileEnv names a new CPU profile file under -profile, if set.
func (b *fleetBench) profileEnv() []string {
	if b.cfg.profile == "" {
		return nil
	}
	b.profiles++
	return []string{fmt.Sprintf("KAPPLY_CPUPROFILE=%s", filepath.Join(b.cfg.profile, fmt.Sprintf("kapply-%03d.pprof", b.profiles)))}
}

// cpuOf is the user+system time of a finished command and of the children
// it waited for (the runner's kapply, the shell's).
func cpuOf(cmd *exec.Cmd) time.Duration {
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// concurrent runs one kapply per server at once, each applying the
// single-server tree (every namespace of that server's contexts).
func (b *fleetBench) concurrent(ctx context.Context, tree string) (fleetRun, error) {
	start := time.Now()
	runs := make([]fleetRun, len(b.servers))
	errs := make([]error, len(b.servers))
	var wg sync.WaitGroup
	for i := range b.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runs[i], errs[i] = b.kapply(ctx, "apply", "-f", tree, "-R", "--context", fmt.Sprintf("server%d", i))
		}()
	}
	wg.Wait()
	r := fleetRun{took: time.Since(start)}
	for _, one := range runs {
		r.cpu += one.cpu
		r.peak = max(r.peak, one.peak)
	}
	return r, errors.Join(errs...)
}

// loop is `for c in CONTEXTS; do kapply apply -f TREE --context $c; done`.
func (b *fleetBench) loop(ctx context.Context, tree, set string, n int) (fleetRun, error) {
	script := `for c in "$@"; do "$KAPPLY" apply -f "$TREE" -R --context "$c" --kubeconfig "$KUBECONFIG_FILE" >/dev/null || exit 1; done`
	args := []string{"-c", script, "loop"}
	for i := range n {
		args = append(args, contextName(set, i))
	}
	cmd := exec.CommandContext(ctx, "bash", args...)
	cmd.Env = append(os.Environ(), "KAPPLY="+b.cfg.kapply, "TREE="+tree, "KUBECONFIG_FILE="+b.path)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return fleetRun{}, fmt.Errorf("the shell loop: %w\n%s", err, lastLines(errOut.String(), 20))
	}
	return fleetRun{took: time.Since(start), cpu: cpuOf(cmd)}, nil
}

// lastLines is the end of a command's output, for an error message.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
