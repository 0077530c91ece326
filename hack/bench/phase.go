package main

// phase is one step of the sequence every tool goes through.
type phase string

const (
	phaseCreate phase = "create" // every object created
	phaseNoop   phase = "noop"   // the same tree again: every object unchanged
	phaseUpdate phase = "update" // every object changed: every object configured
	phaseDiff   phase = "diff"   // every object changed again, only diffed
)

func allPhases() []phase {
	return []phase{phaseCreate, phaseNoop, phaseUpdate, phaseDiff}
}

// generation is the version of the tree the phase runs on.
func (p phase) generation() int {
	switch p {
	case phaseUpdate:
		return 1
	case phaseDiff:
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
