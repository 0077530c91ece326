package merge

import (
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// defaultTriples is the CI sample; KAPPLY_FUZZ_TRIPLES sets another count
// (the README's differential figures use 1,000,000).
const defaultTriples = 4000

// maxMismatches stops a run that has clearly found a bug.
const maxMismatches = 5

// checkGenerated generates the seed's triple for kind k and runs the
// differential checks; it reports a failure on t with the triple and
// returns the strategies the triple exercised and whether it passed.
func checkGenerated(t testing.TB, seed uint64, k *builtin, reach *reachIndex) (strategies, difference, bool) {
	t.Helper()
	l, f, c := genTriple(seed, k, reach)
	rt := &recorder{TB: t}
	_, diff := checkKind(rt, k, l, f, c)
	if rt.failed {
		t.Errorf("seed %d kind %s:\nlast-applied: %s\nfile: %s\nlive: %s\n%s",
			seed, k.name, encodeJSON(t, l), encodeJSON(t, f), encodeJSON(t, c), rt.log)
	}
	return exercised(l, f, c, k.kind), diff, !rt.failed
}

// triplesToRun reads KAPPLY_FUZZ_TRIPLES.
func triplesToRun(t *testing.T) int {
	s := os.Getenv("KAPPLY_FUZZ_TRIPLES")
	if s == "" {
		return defaultTriples
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("parsing KAPPLY_FUZZ_TRIPLES: %v", err)
	}
	return n
}

// TestGeneratedTriples runs KAPPLY_FUZZ_TRIPLES (default defaultTriples)
// seeded triples over every kind of every served group-version, round
// robin, on GOMAXPROCS workers; seed i always gives kind i mod #kinds the
// same triple. It prints, per kind and strategy, how many triples exercised
// it, and fails when a strategy some schema holds was never exercised.
func TestGeneratedTriples(t *testing.T) {
	kinds := allKinds(t).all
	n := triplesToRun(t)
	workers := runtime.GOMAXPROCS(0)
	var mismatches atomic.Int64
	results := make([]*coverage, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[w] = runWorker(t, kinds, w, workers, n, &mismatches)
		}()
	}
	wg.Wait()
	total := newCoverage()
	for _, r := range results {
		total.add(r)
	}
	present := presentStrategies(kinds)
	t.Logf("generated triples: %d run over %d kinds, %d mismatches\n%s%s", n, len(kinds), mismatches.Load(),
		total.table(kinds, present), total.differencesReport())
	checkStrategiesReached(t, total, present)
	if n/len(kinds) >= strictPerKind {
		checkStrategiesReachedPerKind(t, kinds, total, present)
	}
}

// strictPerKind is the number of triples per kind from which every kind
// must exercise every strategy its own schema holds.
const strictPerKind = 1000

// runWorker checks the seeds i ≡ w (mod workers) below n.
func runWorker(t *testing.T, kinds []*builtin, w, workers, n int, mismatches *atomic.Int64) *coverage {
	cov := newCoverage()
	reach := map[*builtin]*reachIndex{}
	for i := w; i < n; i += workers {
		if mismatches.Load() >= maxMismatches {
			break
		}
		k := kinds[i%len(kinds)]
		if reach[k] == nil {
			reach[k] = newReachIndex(k.kind.Strategic)
		}
		hit, diff, ok := checkGenerated(t, uint64(i), k, reach[k])
		if !ok && mismatches.Add(1) >= maxMismatches {
			t.Errorf("stopping after %d mismatches", maxMismatches)
		}
		cov.record(k.name, hit, diff)
	}
	return cov
}

// presentStrategies is, per kind, the strategies its schema holds within
// the generator's reach.
func presentStrategies(kinds []*builtin) map[string]strategies {
	out := make(map[string]strategies, len(kinds))
	for _, k := range kinds {
		out[k.name] = newReachIndex(k.kind.Strategic).reach(k.kind.Root, 0)
	}
	return out
}

// checkStrategiesReached fails for a strategy that some kind's schema holds
// but no triple exercised.
func checkStrategiesReached(t *testing.T, cov *coverage, present map[string]strategies) {
	t.Helper()
	var all strategies
	for _, s := range present {
		all |= s
	}
	_, hits := cov.total()
	for _, x := range all.list() {
		if hits[x] == 0 {
			t.Errorf("strategy %s is in the schemas but no generated triple exercised it", x)
		}
	}
}

// checkStrategiesReachedPerKind fails for a kind whose schema holds a
// strategy that none of the kind's triples exercised.
func checkStrategiesReachedPerKind(t *testing.T, kinds []*builtin, cov *coverage, present map[string]strategies) {
	t.Helper()
	for _, k := range kinds {
		hits := cov.hits[k.name]
		for _, x := range present[k.name].list() {
			if hits == nil || hits[x] == 0 {
				t.Errorf("%s: strategy %s is in its schema but none of its %d triples exercised it", k.name, x, cov.triples[k.name])
			}
		}
	}
}

// FuzzThreeWay explores seeds: every generated triple must pass the
// differential checks, and nothing may panic.
func FuzzThreeWay(f *testing.F) {
	for i := range 16 {
		f.Add(uint64(i), uint16(i))
	}
	f.Fuzz(func(t *testing.T, seed uint64, kind uint16) {
		kinds := allKinds(t).all
		k := kinds[int(kind)%len(kinds)]
		checkGenerated(t, seed, k, newReachIndex(k.kind.Strategic))
	})
}
