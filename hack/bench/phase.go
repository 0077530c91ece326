package main

// phase is one step of the sequence every tool goes through.
type phase string

const (
	phaseCreate phase = "create" // every object created
	phaseNoop   phase = "noop"   // the same tree again: every object unchanged
	phaseUpdate phase = "update" // every object changed: every object configured
	phaseDiff   phase = "diff"   // every object changed again, only diffed
	// phaseDiffLocal is the same diff computed without the server's dry
	// run: kapply diff --dry-run=client. kapp's diff is always computed
	// locally (the same command as phaseDiff); kubectl diff has no such mode.
	phaseDiffLocal phase = "diff-local"
	// phasePlan saves the plan of the diff's tree (every object changed
	// since update, nothing applied since): kapply plan -o FILE, a patch
	// per object. kapply only, as phaseApplyPlan.
	phasePlan phase = "plan"
	// phaseApplyPlan executes that plan file on the same tree: kapply
	// apply --plan FILE, every object configured. Its wall time and
	// plan's, added, are compared with update's: the same number of
	// objects, each changed once.
	phaseApplyPlan phase = "apply-plan"
	// The ApplySet phases (kapply only) apply every object changed, with
	// --prune --applyset: set-adopt makes the set (no history), then
	// set-hist records a revision of it and set-nohist does not
	// (--history-limit 0). set-hist's time over set-nohist's is what
	// recording a revision costs.
	phaseSetAdopt     phase = "set-adopt"
	phaseSetHistory   phase = "set-hist"
	phaseSetNoHistory phase = "set-nohist"
)

// allPhases is the order of the sequence: each phase finds the cluster as
// the one before left it. The diffs change nothing, so plan and apply-plan
// take the cluster from update's generation (1) to the diffs' (2).
func allPhases() []phase {
	return []phase{phaseCreate, phaseNoop, phaseUpdate, phaseDiff, phaseDiffLocal, phasePlan, phaseApplyPlan,
		phaseSetAdopt, phaseSetHistory, phaseSetNoHistory}
}

// diffs tells the phases that only diff.
func (p phase) diffs() bool { return p == phaseDiff || p == phaseDiffLocal }

// plans tells the phases of a saved plan, which only kapply has.
func (p phase) plans() bool { return p == phasePlan || p == phaseApplyPlan }

// inSet tells the phases that apply with --prune --applyset.
func (p phase) inSet() bool {
	return p == phaseSetAdopt || p == phaseSetHistory || p == phaseSetNoHistory
}

// generation is the version of the tree the phase runs on.
func (p phase) generation() int {
	switch p {
	case phaseSetAdopt:
		return 3
	case phaseSetHistory:
		return 4
	case phaseSetNoHistory:
		return 5
	case phaseUpdate:
		return 1
	case phaseDiff, phaseDiffLocal, phasePlan, phaseApplyPlan:
		return 2
	default:
		return 0
	}
}

// outcome is the word kubectl and kapply print for every object of an apply
// phase.
func (p phase) outcome() string {
	switch p {
	case phaseCreate:
		return "created"
	case phaseNoop:
		return "unchanged"
	default:
		return "configured"
	}
}
