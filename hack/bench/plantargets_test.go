package main

import (
	"strings"
	"testing"
	"time"
)

// planResults are three runs of kapply (some phases), of the floor (none
// of a saved plan's) and of a baseline without apply-plan.
func planResults() *results {
	res := &results{tools: []string{nameKapply, nameBase, nameFloor},
		times: map[phase]map[string][]time.Duration{}, rss: map[phase]map[string][]int64{},
		planFiles: map[string][]planSize{}}
	const mib = 1 << 20
	for _, run := range []struct {
		p    phase
		d    time.Duration
		rssM int64
	}{
		{phaseCreate, 2 * time.Second, 90}, {phaseCreate, 2 * time.Second, 80}, {phaseCreate, time.Second, 80},
		{phaseUpdate, 3 * time.Second, 100}, {phaseUpdate, 5 * time.Second, 90}, {phaseUpdate, time.Second, 90},
		// Plan and apply-plan add up to exactly 1.5x update's median: a
		// target met at its bound.
		{phasePlan, 2 * time.Second, 120}, {phasePlan, 9 * time.Second, 110}, {phasePlan, time.Second, 110},
		{phaseApplyPlan, 2500 * time.Millisecond, 160}, {phaseApplyPlan, 2500 * time.Millisecond, 150}, {phaseApplyPlan, time.Second, 150},
	} {
		res.add(run.p, nameKapply, run.d, run.rssM*mib)
		res.add(run.p, nameFloor, run.d, 0)
		res.add(run.p, nameBase, run.d, run.rssM*mib)
	}
	delete(res.times[phasePlan], nameFloor)
	delete(res.times[phaseApplyPlan], nameFloor)
	delete(res.times[phaseApplyPlan], nameBase)
	delete(res.rss[phaseApplyPlan], nameBase)
	// The larger file is not the worse ratio: 3.9 KiB of 0.9 KiB is.
	res.planFiles[nameKapply] = []planSize{{plan: 4000, yaml: 1000}, {plan: 3900, yaml: 900}}
	return res
}

// TestPlanTargetsAgainstUpdate: plan + apply-plan's wall time and their
// larger peak RSS are set against update's (medians; RSS the highest of
// the runs), the plan file against its YAML in the worst run, and every
// step's peak RSS against 400 MiB, each line saying whether its target is
// met; a build that did not run both plan steps gets no lines.
func TestPlanTargetsAgainstUpdate(t *testing.T) {
	res := planResults()
	lines, met, total := planTargets(res, nameKapply)
	want := []string{
		"kapply plan + apply-plan: 2.00s + 2.50s = 4.50s, 1.50x update's 3.00s (target <= 1.5x): PASS",
		"kapply peak RSS of plan, apply-plan: 120 MiB, 160 MiB; the larger 1.60x update's 100 MiB (target <= 1.5x): MISS",
		"kapply plan file: 3.8 KiB, 4.33x the 0.9 KiB of YAML it was made from (target <= 4x): MISS",
		"kapply peak RSS of every step: at most 160 MiB (apply-plan) (target < 400 MiB): PASS",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if met != 2 || total != 4 {
		t.Errorf("%d of %d targets met, want 2 of 4", met, total)
	}
	for _, tool := range []string{nameBase, nameFloor} {
		if lines, met, total := planTargets(res, tool); len(lines) != 0 || met != 0 || total != 0 {
			t.Errorf("%s ran no apply-plan, got %d of %d met and lines %q", tool, met, total, lines)
		}
	}
}

// TestPlanTargetsOverStepRSS: a step at 400 MiB misses the bound, which is
// strict, and the line names that step.
func TestPlanTargetsOverStepRSS(t *testing.T) {
	res := planResults()
	res.add(phaseNoop, nameKapply, time.Second, targetStepRSS)
	lines, _, _ := planTargets(res, nameKapply)
	want := "kapply peak RSS of every step: at most 400 MiB (noop) (target < 400 MiB): MISS"
	if got := lines[len(lines)-1]; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestTableShowsPlanStepsOnlyForKapply: the plan rows have "-" where a
// tool has no such step, and the target lines follow the table.
func TestTableShowsPlanStepsOnlyForKapply(t *testing.T) {
	var b strings.Builder
	if err := newTable(config{objects: 100, namespaces: 10, runs: 3, parallel: 16}, planResults(), nil).writeText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"\napply-plan   2.50s    -             -       -             -              160 MiB      -\n",
		"\nkapply plan targets: 2 of 4 met\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "kapply-base plan") {
		t.Errorf("lines for a build without apply-plan:\n%s", out)
	}
}
