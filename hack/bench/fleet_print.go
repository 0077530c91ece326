package main

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"
)

// The targets of issue 24.
const (
	targetFleetVsThree = 1.3 // fleet / three concurrent single-server runs, at most
	targetLoopVsFleet  = 5.0 // shell loop / fleet, at least
)

// printFleet prints each arm's create and re-apply figures, the ratios the
// issue sets targets for, and the memory runs.
func printFleet(w io.Writer, cfg config, create, reapply [][]fleetRun, memory []memoryRow) error {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "%s; %d contexts on %d servers x %d objects; latency %s each way (round trip %s); medians of %d runs\n",
		time.Now().Format(time.DateTime), cfg.contexts, fleetServers, cfg.objects, cfg.latency, 2*cfg.latency, cfg.runs)
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\tarm\twall\tkapply CPU\tservers CPU\tpeak RSS\t")
	created, reapplied := medians(create), medians(reapply)
	for _, phase := range []struct {
		name string
		runs []fleetRun
	}{{"create", created}, {"re-apply", reapplied}} {
		for _, r := range phase.runs {
			fmt.Fprintf(tw, "%s\t%s\t%.2fs\t%.2fs\t%.2fs\t%s\t\n", phase.name, r.label, r.took.Seconds(), r.cpu.Seconds(), r.server.Seconds(), mib(r.peak))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for i, phase := range []string{"create", "re-apply"} {
		runs := [][]fleetRun{created, reapplied}[i]
		fleet, three, loop := runs[0].took.Seconds(), runs[1].took.Seconds(), runs[2].took.Seconds()
		fmt.Fprintf(&buf, "%s: fleet / 3 concurrent single-server runs %.2fx (target <= %.1fx: %s); shell loop / fleet %.2fx (target >= %.0fx: %s)\n",
			phase, fleet/three, targetFleetVsThree, met(fleet/three <= targetFleetVsThree), loop/fleet, targetLoopVsFleet, met(loop/fleet >= targetLoopVsFleet))
	}
	printMemory(&buf, memory)
	_, err := w.Write(buf.Bytes())
	return err
}

// printMemory prints the memory runs (median time and peak, and the
// peaks' range) and how the peak grows with --max-parallel and with the
// number of contexts.
func printMemory(buf *bytes.Buffer, memory []memoryRow) {
	if len(memory) == 0 {
		return
	}
	fmt.Fprintln(buf, "peak RSS (median of the runs, and their range):")
	peaks := map[string]int64{}
	for _, row := range memory {
		byPeak := slices.Clone(row.runs)
		slices.SortFunc(byPeak, func(a, b fleetRun) int { return int(a.peak - b.peak) })
		median := byPeak[len(byPeak)/2].peak
		peaks[row.label] = median
		fmt.Fprintf(buf, "  %-55s %8.2fs  %s (%s-%s)\n", row.label, medianRun(row.runs).took.Seconds(),
			mib(median), mib(byPeak[0].peak), mib(byPeak[len(byPeak)-1].peak))
	}
	// The rows: the memory sets' creates, then --max-parallel 1, 5, 10,
	// all, then the memory sets' re-applies.
	sets := len(memorySets)
	fewest, most := memory[sets+4].label, memory[len(memory)-1].label
	fmt.Fprintf(buf, "peak RSS --max-parallel all / 1: %.2fx; %d / %d contexts at --max-parallel 5 (re-apply): %.2fx\n",
		ratio(peaks[memory[sets+3].label], peaks[memory[sets].label]), memorySets[sets-1], memorySets[0], ratio(peaks[most], peaks[fewest]))
}

func ratio(a, b int64) float64 { return float64(a) / float64(b) }

// medians are each arm's median run.
func medians(arms [][]fleetRun) []fleetRun {
	out := make([]fleetRun, len(arms))
	for i, runs := range arms {
		out[i] = medianRun(runs)
	}
	return out
}

func medianRun(runs []fleetRun) fleetRun {
	sorted := slices.Clone(runs)
	slices.SortFunc(sorted, func(a, b fleetRun) int { return int(a.took - b.took) })
	return sorted[len(sorted)/2]
}

func mib(bytes int64) string {
	if bytes <= 0 {
		return "-"
	}
	return fmt.Sprintf("%d MiB", bytes>>20)
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}
