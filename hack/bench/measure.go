package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"time"
)

// results are the measured durations by phase and tool, one per run.
type results struct {
	tools []string // in the order of the table's columns
	times map[phase]map[string][]time.Duration
	// rss are the peak resident set sizes, in bytes, of the tools that run
	// as processes.
	rss map[phase]map[string][]int64
	// planFiles are the sizes of the plan files each tool saved, one per
	// run.
	planFiles map[string][]planSize
}

// planSize is the size of a plan file and of the YAML it was made from.
type planSize struct{ plan, yaml int64 }

// measure runs every phase of every run for every tool, interleaving the
// tools phase by phase so that they see the cluster in the same state.
func measure(ctx context.Context, cfg config, tools []tool, work string, stderr io.Writer) (*results, error) {
	res := &results{times: map[phase]map[string][]time.Duration{}, rss: map[phase]map[string][]int64{},
		planFiles: map[string][]planSize{}}
	for _, t := range tools {
		res.tools = append(res.tools, t.name())
	}
	for run := 1; run <= cfg.runs; run++ {
		trees, err := makeTrees(cfg, tools, work, run)
		if err != nil {
			return nil, err
		}
		for _, p := range allPhases() {
			if err := measurePhase(ctx, p, tools, trees, cfg.objects, res, stderr); err != nil {
				return nil, fmt.Errorf("run %d: %w", run, err)
			}
		}
	}
	return res, nil
}

// makeTrees gives each tool its own tree and namespaces for one run.
func makeTrees(cfg config, tools []tool, work string, run int) ([]*tree, error) {
	trees := make([]*tree, len(tools))
	for i, t := range tools {
		prefix := "bench-" + t.name()
		if run > 1 {
			prefix = fmt.Sprintf("%s-r%d", prefix, run)
		}
		dir := filepath.Join(work, "trees", fmt.Sprintf("%s-r%d", t.name(), run))
		var err error
		if trees[i], err = newTree(dir, prefix, cfg); err != nil {
			return nil, err
		}
	}
	return trees, nil
}

func measurePhase(ctx context.Context, p phase, tools []tool, trees []*tree, want int, res *results, stderr io.Writer) error {
	for i, t := range tools {
		if !t.supports(p) {
			logf(stderr, "%-11s %-10s skipped: not supported", t.name(), p)
			continue
		}
		d, out, err := measureOne(ctx, t, p, trees[i], want, stderr)
		if err != nil {
			return err
		}
		res.add(p, t.name(), d, out.maxRSS)
		if out.planBytes > 0 {
			res.planFiles[t.name()] = append(res.planFiles[t.name()], planSize{plan: out.planBytes, yaml: out.yamlBytes})
		}
	}
	return nil
}

// measureOne writes the phase's generation of the tree, then times the tool
// on it; the time includes checking the outcome, which is negligible.
func measureOne(ctx context.Context, t tool, p phase, tr *tree, want int, stderr io.Writer) (time.Duration, outcome, error) {
	if err := tr.write(p.generation()); err != nil {
		return 0, outcome{}, err
	}
	start := time.Now()
	out, err := t.run(ctx, p, tr.dir, want)
	elapsed := time.Since(start)
	if err != nil {
		return 0, out, fmt.Errorf("%s %s failed after %.2fs: %w", t.name(), p, elapsed.Seconds(), err)
	}
	rss := ""
	if out.maxRSS > 0 {
		rss = fmt.Sprintf(", peak RSS %s", formatRSS(out.maxRSS))
	}
	logf(stderr, "%-11s %-10s %8.2fs  %s%s", t.name(), p, elapsed.Seconds(), out.summary, rss)
	return elapsed, out, nil
}

func (r *results) add(p phase, tool string, d time.Duration, rss int64) {
	if r.times[p] == nil {
		r.times[p] = map[string][]time.Duration{}
		r.rss[p] = map[string][]int64{}
	}
	r.times[p][tool] = append(r.times[p][tool], d)
	if rss > 0 {
		r.rss[p][tool] = append(r.rss[p][tool], rss)
	}
}

// maxRSS is the highest peak RSS of a tool in a phase over the runs; ok is
// false when it is not known.
func (r *results) maxRSS(p phase, tool string) (int64, bool) {
	if len(r.rss[p][tool]) == 0 {
		return 0, false
	}
	return slices.Max(r.rss[p][tool]), true
}

// median is the median time of a tool in a phase; ok is false when the tool
// did not run it.
func (r *results) median(p phase, tool string) (time.Duration, bool) {
	times := slices.Clone(r.times[p][tool])
	if len(times) == 0 {
		return 0, false
	}
	slices.Sort(times)
	return times[len(times)/2], true
}
