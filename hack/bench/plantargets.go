package main

import (
	"fmt"
	"slices"
)

// The targets of a saved plan (issue 33): plan and apply --plan together
// cost at most targetPlanVsApply times the plain apply of an equally
// changed tree (update), in wall time and in peak RSS; the plan file is at
// most targetPlanFile times the YAML it was made from; no step of kapply
// reaches targetStepRSS.
const (
	targetPlanVsApply = 1.5
	targetPlanFile    = 4.0
	targetStepRSS     = 400 << 20 // bytes
)

// planTargets are the lines on the cost of a saved plan for one kapply
// build (tool), each ending in PASS or MISS, and how many targets it met
// of how many it was measured against. No lines when the tool ran no plan
// steps (an older build without them).
func planTargets(res *results, tool string) (lines []string, met, total int) {
	plan, okPlan := res.median(phasePlan, tool)
	applied, okApplied := res.median(phaseApplyPlan, tool)
	if !okPlan || !okApplied {
		return nil, 0, 0
	}
	check := func(ok bool) string {
		total++
		if ok {
			met++
			return "PASS"
		}
		return "MISS"
	}
	if update, ok := res.median(phaseUpdate, tool); ok && update > 0 {
		r := (plan + applied).Seconds() / update.Seconds()
		lines = append(lines, fmt.Sprintf("%s plan + apply-plan: %.2fs + %.2fs = %.2fs, %.2fx update's %.2fs (target <= %gx): %s",
			tool, plan.Seconds(), applied.Seconds(), (plan+applied).Seconds(), r, update.Seconds(), targetPlanVsApply, check(r <= targetPlanVsApply)))
	}
	rssPlan, okPlan := res.maxRSS(phasePlan, tool)
	rssApplied, okApplied := res.maxRSS(phaseApplyPlan, tool)
	rssUpdate, okUpdate := res.maxRSS(phaseUpdate, tool)
	if okPlan && okApplied && okUpdate && rssUpdate > 0 {
		most := max(rssPlan, rssApplied)
		r := float64(most) / float64(rssUpdate)
		lines = append(lines, fmt.Sprintf("%s peak RSS of plan, apply-plan: %s, %s; the larger %.2fx update's %s (target <= %gx): %s",
			tool, formatRSS(rssPlan), formatRSS(rssApplied), r, formatRSS(rssUpdate), targetPlanVsApply, check(r <= targetPlanVsApply)))
	}
	if worst, ok := worstPlanFile(res.planFiles[tool]); ok {
		r := float64(worst.plan) / float64(worst.yaml)
		lines = append(lines, fmt.Sprintf("%s plan file: %s, %.2fx the %s of YAML it was made from (target <= %gx): %s",
			tool, formatBytes(worst.plan), r, formatBytes(worst.yaml), targetPlanFile, check(r <= targetPlanFile)))
	}
	if most, at, ok := highestRSS(res, tool); ok {
		lines = append(lines, fmt.Sprintf("%s peak RSS of every step: at most %s (%s) (target < %s): %s",
			tool, formatRSS(most), at, formatRSS(targetStepRSS), check(most < targetStepRSS)))
	}
	return lines, met, total
}

// worstPlanFile is the run whose plan file was the largest against its
// YAML; ok is false when there was none.
func worstPlanFile(sizes []planSize) (planSize, bool) {
	sizes = slices.DeleteFunc(slices.Clone(sizes), func(s planSize) bool { return s.yaml <= 0 })
	if len(sizes) == 0 {
		return planSize{}, false
	}
	return slices.MaxFunc(sizes, func(a, b planSize) int {
		// a.plan/a.yaml against b.plan/b.yaml without dividing.
		x, y := a.plan*b.yaml, b.plan*a.yaml
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	}), true
}

// highestRSS is the highest peak RSS of a tool over every phase and run,
// and the phase it was in (the first in the sequence on a tie).
func highestRSS(res *results, tool string) (int64, phase, bool) {
	var (
		most  int64
		at    phase
		found bool
	)
	for _, p := range allPhases() {
		if rss, ok := res.maxRSS(p, tool); ok && (!found || rss > most) {
			most, at, found = rss, p, true
		}
	}
	return most, at, found
}

// formatBytes is a file's size in KiB or, from 1 MiB, MiB.
func formatBytes(b int64) string {
	if b < 1<<20 {
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
}
