//go:build race

package jsonmap

// raceEnabled scales the generated tests down: the race detector makes
// them ten times slower and they share no memory to race on.
const raceEnabled = true
