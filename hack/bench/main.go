// Command bench measures kapply against `kubectl apply` and against the floor,
// a raw client-go loop making the same requests with the same parallelism, on
// a local cluster it starts and stops itself. It is a benchmark, not a test:
// run it with `make bench` (flags through BENCH_FLAGS).
//
// Every tool gets its own tree and namespaces, and goes through the phases
// create, noop (re-apply), update (every object changed), diff and
// diff-local (every object differs); kapply also through plan (the plan of
// the diffs' tree saved to a file) and apply-plan (that file executed). Each phase's outcome is checked: a benchmark of a failing
// command measures nothing, so any failure stops the run.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/kapply/kapply/internal/peakrss"
	"github.com/kapply/kapply/internal/testcluster"
)

func main() {
	peakrss.ServeRunner()
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// config holds the flags.
type config struct {
	objects    int
	namespaces int
	parallel   int
	runs       int
	kapply     string
	baseline   string
	kubectl    string
	kapp       string
	out        string
	keep       bool
	// writeTree, when set, is where to write one tree (prefix bench, at
	// generation) instead of measuring: for profiling one tool by hand.
	writeTree  string
	generation int
	// fleet measures kapply over -contexts contexts on three servers
	// instead of the tools (see benchFleet).
	fleet    bool
	contexts int
	latency  time.Duration
	// skipMemory leaves out -fleet's memory runs; profile is a folder for
	// a CPU profile of each kapply run -fleet measures.
	skipMemory bool
	profile    string
	// hold, with -fleet, sets the servers and contexts up and waits for
	// an interrupt instead of measuring: for profiling by hand.
	hold bool
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&cfg.objects, "objects", 1000, "objects per tool, its Namespaces included")
	fs.IntVar(&cfg.namespaces, "namespaces", 10, "namespaces per tool")
	fs.IntVar(&cfg.parallel, "parallel", 16, "concurrency: kapply's --parallel (when it has it) and the floor's workers")
	fs.IntVar(&cfg.runs, "runs", 1, "repetitions of the whole sequence, each in fresh namespaces; the table shows medians (-fleet: creates, each in new contexts, and re-applies of each arm, alternated)")
	fs.StringVar(&cfg.kapply, "kapply", "bin/kapply", "the kapply binary to measure")
	fs.StringVar(&cfg.baseline, "baseline", "", "another kapply binary (an older build) measured in the same runs, phase by phase after -kapply: column kapply-base, ratio kapply/base")
	fs.StringVar(&cfg.kubectl, "kubectl", "kubectl", "the kubectl binary, looked up on PATH; empty to leave kubectl out")
	fs.StringVar(&cfg.kapp, "kapp", "bin/kapp", "the Carvel kapp binary (make kapp-bin); empty to leave kapp out, skipped when missing")
	fs.StringVar(&cfg.out, "out", "", "also write the table as markdown to this file")
	fs.BoolVar(&cfg.keep, "keep", false, "keep the work folder (trees, kubeconfig) instead of removing it")
	fs.StringVar(&cfg.writeTree, "write-tree", "", "only write a tree of -objects (Namespaces bench-0..) at -generation into this folder, for profiling by hand (the Widgets' CRD: -write-tree's crd.yaml)")
	fs.IntVar(&cfg.generation, "generation", 0, "with -write-tree: the generation (0 create, 1 update, 2 diff and plan)")
	fs.BoolVar(&cfg.fleet, "fleet", false, "measure kapply over many contexts on three servers instead (-contexts x -objects objects; make bench-fleet)")
	fs.IntVar(&cfg.contexts, "contexts", 30, "with -fleet: the contexts, spread over the three servers")
	fs.DurationVar(&cfg.latency, "latency", 0, "with -fleet: reach each server through a proxy that delays every chunk this long each way, as a remote cluster")
	fs.BoolVar(&cfg.skipMemory, "skip-memory", false, "with -fleet: leave out the peak RSS runs by --max-parallel and by number of contexts")
	fs.StringVar(&cfg.profile, "profile", "", "with -fleet: write a CPU profile of each kapply run into this folder (kapply-NNN.pprof, in the order measured)")
	fs.BoolVar(&cfg.hold, "hold", false, "with -fleet: set up the servers, contexts and trees, print where they are, and wait for an interrupt instead of measuring (for profiling by hand)")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	return cfg, cfg.validate()
}

func (c config) validate() error {
	switch {
	case c.namespaces < 1:
		return fmt.Errorf("-namespaces must be at least 1, got %d", c.namespaces)
	case c.objects < c.namespaces+len(workloadKinds()):
		return fmt.Errorf("-objects must be at least %d (the namespaces and one of each kind), got %d",
			c.namespaces+len(workloadKinds()), c.objects)
	case c.parallel < 1:
		return fmt.Errorf("-parallel must be at least 1, got %d", c.parallel)
	case c.runs < 1:
		return fmt.Errorf("-runs must be at least 1, got %d", c.runs)
	}
	return nil
}

// run starts the cluster, measures every tool and prints the table. The
// cluster is stopped and the work folder removed whatever happens.
func run(args []string, stdout, stderr io.Writer) (err error) {
	cfg, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	if cfg.writeTree != "" {
		return writeTree(cfg)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	work, err := os.MkdirTemp("", "kapply-bench-")
	if err != nil {
		return fmt.Errorf("creating the work folder: %w", err)
	}
	defer func() { err = errors.Join(err, cleanWork(work, cfg.keep, stderr)) }()
	if cfg.fleet {
		return benchFleet(ctx, cfg, work, stdout, stderr)
	}
	logf(stderr, "starting a local cluster (work folder %s)", work)
	cluster, err := testcluster.Start(filepath.Join(work, "kubeconfig"))
	if err != nil {
		return fmt.Errorf("starting the local cluster: %w", err)
	}
	defer func() { err = errors.Join(err, cluster.Stop()) }()
	return bench(ctx, cfg, cluster, work, stdout, stderr)
}

func bench(ctx context.Context, cfg config, cluster *testcluster.Cluster, work string, stdout, stderr io.Writer) error {
	if err := createCRD(ctx, cluster.Config); err != nil {
		return err
	}
	tools, notes, err := detectTools(ctx, cfg, cluster, work)
	if err != nil {
		return err
	}
	res, err := measure(ctx, cfg, tools, work, stderr)
	if err != nil {
		return err
	}
	t := newTable(cfg, res, notes)
	if err := t.writeText(stdout); err != nil {
		return fmt.Errorf("printing the table: %w", err)
	}
	if cfg.out == "" {
		return nil
	}
	if err := os.WriteFile(cfg.out, []byte(t.markdown()), 0o644); err != nil {
		return fmt.Errorf("writing the table to %s: %w", cfg.out, err)
	}
	return nil
}

// writeTree writes one tree, and the Widgets' CRD beside it as crd.yaml.
func writeTree(cfg config) error {
	tr, err := newTree(filepath.Join(cfg.writeTree, "tree"), "bench", cfg)
	if err != nil {
		return err
	}
	if err := tr.write(cfg.generation); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(cfg.writeTree, "crd.yaml"), []byte(crdManifest), 0o644)
}

func cleanWork(work string, keep bool, stderr io.Writer) error {
	if keep {
		logf(stderr, "kept the work folder %s", work)
		return nil
	}
	if err := os.RemoveAll(work); err != nil {
		return fmt.Errorf("removing the work folder: %w", err)
	}
	return nil
}

// logf prints a progress line on stderr.
func logf(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "bench: "+format+"\n", args...)
}
