package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/kapply/kapply/internal/peakrss"
	"github.com/kapply/kapply/internal/testcluster"
)

// tool is one contender: it runs a phase on a tree, checks the outcome and
// returns a short summary of it.
type tool interface {
	name() string
	supports(p phase) bool
	run(ctx context.Context, p phase, dir string, want int) (outcome, error)
}

// outcome is what a tool's run of a phase left: a short summary and, for a
// separate process, its peak resident set size (0 when unknown: the floor
// runs in the benchmark's process). A plan phase also reports the size of
// the plan file and of the YAML tree it was made from.
type outcome struct {
	summary   string
	maxRSS    int64 // bytes
	planBytes int64
	yamlBytes int64
}

// Tool names, also the table's columns in this order.
const (
	nameKubectl = "kubectl"
	nameKapp    = "kapp"
	nameKapply  = "kapply"
	nameBase    = "kapply-base"
	nameFloor   = "floor"
)

// detectTools returns the tools to measure and one note per tool saying
// which version runs with which flags.
func detectTools(ctx context.Context, cfg config, c *testcluster.Cluster, work string) ([]tool, []string, error) {
	kapply, err := newKapply(ctx, cfg, c.Kubeconfig, filepath.Join(work, "cache-kapply"))
	if err != nil {
		return nil, nil, err
	}
	tools, notes := []tool{kapply}, []string{kapply.describe()}
	kubectl, err := newKubectl(ctx, cfg.kubectl, c.Kubeconfig, filepath.Join(work, "cache-kubectl"))
	switch {
	case cfg.kubectl == "":
		notes = append(notes, "kubectl: left out (-kubectl '')")
	case errors.Is(err, exec.ErrNotFound):
		notes = append(notes, fmt.Sprintf("kubectl: %s not on PATH (its column is skipped)", cfg.kubectl))
	case err != nil:
		return nil, nil, err
	default:
		tools, notes = append([]tool{kubectl}, tools...), append(notes, kubectl.describe())
	}
	kapp, err := newKapp(ctx, cfg.kapp, c.Kubeconfig, cfg.parallel)
	switch {
	case cfg.kapp == "":
		notes = append(notes, "kapp: left out (-kapp '')")
	case errors.Is(err, exec.ErrNotFound):
		notes = append(notes, fmt.Sprintf("kapp: %s not found, its column is skipped (make kapp-bin builds it)", cfg.kapp))
	case err != nil:
		return nil, nil, err
	default:
		// After kubectl, before kapply: the table's column order.
		at := len(tools) - 1
		tools = append(tools[:at], append([]tool{kapp}, tools[at:]...)...)
		notes = append(notes, kapp.describe())
	}
	if cfg.baseline != "" {
		base, err := newKapplyAt(ctx, nameBase, cfg.baseline, cfg.parallel, c.Kubeconfig, filepath.Join(work, "cache-base"))
		if err != nil {
			return nil, nil, err
		}
		tools, notes = append(tools, base), append(notes, base.describe())
	}
	floor, err := newFloor(c.Config, cfg.parallel)
	if err != nil {
		return nil, nil, err
	}
	return append(tools, floor), append(notes, floor.describe()), nil
}

// result is what one run of a command left.
type result struct {
	cmdline string
	stdout  string
	stderr  string
	code    int
	maxRSS  int64 // bytes, from the process's resource usage
}

// execute runs a command to its end; a non-zero exit status is a result,
// not an error.
func execute(ctx context.Context, bin string, args ...string) (result, error) {
	var stdout, stderr bytes.Buffer
	run, err := peakrss.Command(ctx, bin, args...)
	if err != nil {
		return result{}, err
	}
	cmd := run.Cmd
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	res := result{cmdline: bin + " " + strings.Join(args, " "), stdout: stdout.String(), stderr: stderr.String()}
	res.maxRSS, _ = run.Peak()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		res.code = exit.ExitCode()
		return res, nil
	}
	if err != nil {
		return res, fmt.Errorf("running %s: %w", res.cmdline, err)
	}
	return res, nil
}

// failure describes a command whose outcome is not the expected one, with
// the end of its output.
func (r result) failure(format string, args ...any) error {
	return fmt.Errorf("%s: %s (exit status %d)\nstdout (end):\n%s\nstderr (end):\n%s",
		r.cmdline, fmt.Sprintf(format, args...), r.code, tail(r.stdout, 10), tail(r.stderr, 20))
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
