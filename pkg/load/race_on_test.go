//go:build race

package load

// raceEnabled: the tests run with the race detector, about five times
// slower; the differential tests read less generated input (thorough).
const raceEnabled = true
