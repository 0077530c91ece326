package merge

import (
	"os"
	"strconv"
	"testing"
)

// fuzzKinds are the built-in kinds the generator walks.
var fuzzKinds = []string{"Deployment", "Pod", "Service", "ConfigMap", "DaemonSet", "StatefulSet", "Job"}

// checkGenerated generates one triple and runs both differential checks;
// it reports failures on t and returns false on a mismatch.
func checkGenerated(t testing.TB, seed uint64, kindIndex int) bool {
	t.Helper()
	b := builtins(t)[fuzzKinds[kindIndex%len(fuzzKinds)]]
	l, f, c := newGen(seed).triple(b.kind.Root)
	rt := &recorder{TB: t}
	checkAgainstOracleOn(rt, b, l, f, c)
	if rt.failed {
		t.Errorf("seed %d kind %s:\nlast-applied: %s\nfile: %s\nlive: %s\n%s",
			seed, b.name, encodeJSON(t, l), encodeJSON(t, f), encodeJSON(t, c), rt.log)
	}
	return !rt.failed
}

// TestGeneratedTriples runs KAPPLY_FUZZ_TRIPLES (default 2000) seeded
// triples deterministically and reports how many ran and mismatched.
func TestGeneratedTriples(t *testing.T) {
	n := 2000
	if s := os.Getenv("KAPPLY_FUZZ_TRIPLES"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("parsing KAPPLY_FUZZ_TRIPLES: %v", err)
		}
		n = v
	}
	mismatches := 0
	for i := range n {
		if !checkGenerated(t, uint64(i), i) {
			mismatches++
			if mismatches >= 5 {
				t.Fatalf("stopping after %d mismatches in %d triples", mismatches, i+1)
			}
		}
	}
	t.Logf("generated triples: %d run, %d mismatches", n, mismatches)
}

// FuzzThreeWay explores seeds: every generated triple must pass both
// differential checks, and nothing may panic.
func FuzzThreeWay(f *testing.F) {
	for i := range 16 {
		f.Add(uint64(i), uint8(i))
	}
	f.Fuzz(func(t *testing.T, seed uint64, kind uint8) {
		checkGenerated(t, seed, int(kind))
	})
}
