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
)

func allPhases() []phase {
	return []phase{phaseCreate, phaseNoop, phaseUpdate, phaseDiff, phaseDiffLocal}
}

// diffs tells the phases that only diff.
func (p phase) diffs() bool { return p == phaseDiff || p == phaseDiffLocal }

// generation is the version of the tree the phase runs on.
func (p phase) generation() int {
	switch p {
	case phaseUpdate:
		return 1
	case phaseDiff, phaseDiffLocal:
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
