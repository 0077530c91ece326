package fleet

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kapply/kapply/pkg/apply"
)

func clusters(n int) []Cluster {
	out := make([]Cluster, n)
	for i := range out {
		out[i] = Cluster{Context: fmt.Sprintf("c%d", i)}
	}
	return out
}

func TestWaves(t *testing.T) {
	for _, tc := range []struct {
		n, canary, size int
		want            [][]int
	}{
		{5, 0, 0, [][]int{{0, 1, 2, 3, 4}}},
		{5, 1, 2, [][]int{{0}, {1, 2}, {3, 4}}},
		{5, 2, 0, [][]int{{0, 1}, {2, 3, 4}}},
		{3, 5, 1, [][]int{{0, 1, 2}}},
		{0, 1, 1, nil},
	} {
		if got := Waves(tc.n, tc.canary, tc.size); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Waves(%d, %d, %d) = %v, want %v", tc.n, tc.canary, tc.size, got, tc.want)
		}
	}
}

// A wave starts only after every cluster of the previous one finished, and
// no more than MaxParallel run at once.
func TestRunWavesInOrderWithinMaxParallel(t *testing.T) {
	var running, peak atomic.Int64
	var mu sync.Mutex
	var events []Event
	opts := Options{MaxParallel: 2, Canary: 1, WaveSize: 3, OnEvent: func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, e)
	}}
	results := runFunc(context.Background(), clusters(7), opts, func(ctx context.Context, c Cluster) Outcome {
		n := running.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		time.Sleep(20 * time.Millisecond)
		running.Add(-1)
		return Outcome{Counts: Counts{Created: 1}}
	})
	if peak.Load() > 2 {
		t.Errorf("%d clusters ran at once, want at most 2", peak.Load())
	}
	lastFinish := map[int]time.Time{}
	for _, e := range events {
		if e.Kind == ClusterFinished && e.Time.After(lastFinish[e.Wave]) {
			lastFinish[e.Wave] = e.Time
		}
	}
	for _, e := range events {
		if e.Kind == ClusterStarted && e.Wave > 0 && e.Time.Before(lastFinish[e.Wave-1]) {
			t.Errorf("%s of wave %d started before wave %d finished", e.Context, e.Wave, e.Wave-1)
		}
	}
	wantWaves := []int{0, 1, 1, 1, 2, 2, 2}
	for i, r := range results {
		if r.Wave != wantWaves[i] || r.Created != 1 || r.ClusterFailed {
			t.Errorf("result %d = %+v, want wave %d, created 1, not failed", i, r, wantWaves[i])
		}
	}
}

func TestFailedCanaryStopsTheRun(t *testing.T) {
	var ran atomic.Int64
	results := runFunc(context.Background(), clusters(4), Options{MaxParallel: 4, Canary: 1}, func(ctx context.Context, c Cluster) Outcome {
		ran.Add(1)
		return Outcome{Code: 1, ClusterFailed: true, Err: errors.New("boom")}
	})
	if ran.Load() != 1 {
		t.Fatalf("%d clusters ran, want only the canary", ran.Load())
	}
	for _, r := range results[1:] {
		if !r.NotStarted || !errors.Is(r.Err, ErrNotStarted) || !r.ClusterFailed {
			t.Errorf("%s: %+v, want not started and failed", r.Context, r)
		}
	}
}

func TestFailFastStopsLaterWavesAndOthersGoOnWithout(t *testing.T) {
	job := func(ctx context.Context, c Cluster) Outcome {
		if c.Context == "c1" {
			return Outcome{Code: 1, ClusterFailed: true, Err: errors.New("boom")}
		}
		return Outcome{}
	}
	results := runFunc(context.Background(), clusters(6), Options{MaxParallel: 1, WaveSize: 2, FailFast: true}, job)
	for i, r := range results {
		if want := i >= 2; r.NotStarted != want {
			t.Errorf("fail-fast: %s not started = %v, want %v", r.Context, r.NotStarted, want)
		}
	}
	results = runFunc(context.Background(), clusters(6), Options{MaxParallel: 1, WaveSize: 2}, job)
	for _, r := range results {
		if r.NotStarted || r.ClusterFailed != (r.Context == "c1") {
			t.Errorf("without fail-fast: %+v", r)
		}
	}
}

// A job that ignores its context (a client stuck without a deadline) is
// given up after the grace; the run returns and says timed out.
func TestHungClusterIsGivenUp(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	start := time.Now()
	results := runFunc(context.Background(), clusters(2), Options{MaxParallel: 2, ClusterTimeout: 100 * time.Millisecond, AbandonAfter: 100 * time.Millisecond},
		func(ctx context.Context, c Cluster) Outcome {
			if c.Context == "c0" {
				<-release
			}
			return Outcome{Counts: Counts{Unchanged: 1}}
		})
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("run took %s with a hung cluster", d)
	}
	if r := results[0]; !r.TimedOut || !r.ClusterFailed || r.Err == nil {
		t.Errorf("hung cluster: %+v, want timed out and failed", r)
	}
	if r := results[1]; r.TimedOut || r.ClusterFailed || r.Unchanged != 1 {
		t.Errorf("other cluster: %+v, want done", r)
	}
}

func TestSelect(t *testing.T) {
	all := []Cluster{{Context: "dev"}, {Context: "prod-eu"}, {Context: "prod-us"}, {Context: "staging"}}
	names := func(cs []Cluster) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Context)
		}
		return out
	}
	for _, tc := range []struct {
		patterns []string
		want     []string
		err      bool
	}{
		{[]string{"staging", "prod-*"}, []string{"staging", "prod-eu", "prod-us"}, false},
		{[]string{"re:prod-(eu|us)", "prod-eu"}, []string{"prod-eu", "prod-us"}, false},
		{[]string{"re:prod"}, nil, true},
		{[]string{"nope"}, nil, true},
		{[]string{"re:("}, nil, true},
		{[]string{"[-"}, nil, true},
	} {
		got, err := Select(all, tc.patterns)
		if (err != nil) != tc.err || !reflect.DeepEqual(names(got), tc.want) {
			t.Errorf("Select(%q) = %v, %v; want %v (error %v)", tc.patterns, names(got), err, tc.want, tc.err)
		}
	}
}

// runFunc runs fn in each cluster, with no Applier.
func runFunc(ctx context.Context, cs []Cluster, opts Options, fn func(context.Context, Cluster) Outcome) []Result {
	return Run(ctx, Config{Clusters: cs, Options: opts,
		Connect:   func(Cluster) (*apply.Applier, error) { return nil, nil },
		Operation: Func{Do: func(ctx context.Context, c Cluster, _ *apply.Applier) Outcome { return fn(ctx, c) }}})
}
