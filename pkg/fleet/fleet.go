package fleet

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/plan"
)

// Cluster is one kubeconfig context, with the labels a clusters file gives
// it.
type Cluster struct {
	Context string            `json:"context"`
	Labels  map[string]string `json:"labels,omitempty"`
}

// Options control a run over many clusters.
type Options struct {
	// MaxParallel is how many clusters run at once; 0 or less means 1.
	MaxParallel int
	// Canary is how many clusters (the first ones) run alone, as wave 0,
	// before any other starts. A failed canary stops the run.
	Canary int
	// WaveSize is how many clusters each later wave holds; 0: all the rest.
	// A wave starts when the previous one has finished.
	WaveSize int
	// ClusterTimeout bounds each cluster's job (its context's deadline); 0:
	// none. A job still running AbandonAfter past it is given up: its
	// result says timed out and whatever it does later is not reported.
	ClusterTimeout time.Duration
	// AbandonAfter is the grace given to a job to return after its deadline;
	// 0 means DefaultAbandonAfter.
	AbandonAfter time.Duration
	// FailFast stops starting clusters after one failed; those not started
	// are reported as such.
	FailFast bool
	// OnEvent, if set, is called as clusters start and finish, concurrently
	// from the clusters' goroutines.
	OnEvent func(Event)
}

// DefaultAbandonAfter is the grace of Options.AbandonAfter.
const DefaultAbandonAfter = 5 * time.Second

// job runs on one cluster until ctx ends and says how it went: Run's
// Connect then Operation.
type job func(ctx context.Context, cluster Cluster) Outcome

// Outcome is what an operation reports for its cluster.
type Outcome struct {
	Counts
	Ready Readiness
	// Code is the cluster's exit code (0 success).
	Code int
	// ClusterFailed says the cluster failed (a diff's exit 1,
	// "differences", is a code that is not a failure). Run sets it for
	// every Code at or above the operation's FailureCode.
	ClusterFailed bool
	// Err is the cluster's first error, if any.
	Err error
	// Events are the objects' outcomes (Apply, Delete, Execute).
	Events []apply.Event
	// Plan is the cluster's plan (Plan, Diff).
	Plan *plan.Plan
	// Statuses are the objects' states (Status).
	Statuses []apply.ObjectStatus
}

// Result is one cluster's part of a run.
type Result struct {
	Cluster
	Outcome
	// Wave is the wave the cluster ran in (0 is the canary wave when
	// Options.Canary is set); -1 when it was not started.
	Wave     int
	Started  time.Time
	Duration time.Duration
	// TimedOut: the job did not finish within Options.ClusterTimeout.
	TimedOut bool
	// NotStarted: a failed canary, --fail-fast or the end of the run's
	// context kept the cluster from starting; Err says which.
	NotStarted bool
}

// ErrNotStarted is the error of a cluster that was never started.
var ErrNotStarted = errors.New("not started")

// EventKind says what happened to a cluster.
type EventKind int

const (
	// ClusterStarted: the cluster's job began.
	ClusterStarted EventKind = iota
	// ClusterFinished: the job returned, or was given up after its deadline.
	ClusterFinished
	// ClusterNotStarted: the cluster will not run; Result says why.
	ClusterNotStarted
)

// Event reports a cluster starting or finishing.
type Event struct {
	Context string
	Kind    EventKind
	Wave    int
	Time    time.Time
	// Result is set for ClusterFinished and ClusterNotStarted.
	Result *Result
}

// runJobs runs job on every cluster, wave after wave (see Waves), and
// returns a Result per cluster in the order of clusters. It returns when
// every started job has returned or been given up.
func runJobs(ctx context.Context, clusters []Cluster, opts Options, job job) []Result {
	results := make([]Result, len(clusters))
	for i, c := range clusters {
		results[i] = Result{Cluster: c, Wave: -1}
	}
	var stopped error
	for w, wave := range Waves(len(clusters), opts.Canary, opts.WaveSize) {
		if stopped == nil && ctx.Err() != nil {
			stopped = fmt.Errorf("%w: %w", ErrNotStarted, context.Cause(ctx))
		}
		if stopped != nil {
			notStarted(results, wave, stopped, opts)
			continue
		}
		if failed := runWave(ctx, w, wave, opts, job, results); failed {
			switch {
			case w == 0 && opts.Canary > 0:
				stopped = fmt.Errorf("%w: the canary wave failed", ErrNotStarted)
			case opts.FailFast:
				stopped = fmt.Errorf("%w: --fail-fast after a failed cluster", ErrNotStarted)
			}
		}
	}
	return results
}

// runWave runs the clusters at indexes wave, at most MaxParallel at once,
// and reports whether any failed.
func runWave(ctx context.Context, w int, wave []int, opts Options, job job, results []Result) bool {
	slots := make(chan struct{}, max(opts.MaxParallel, 1))
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		failed bool
	)
	anyFailed := func() bool { mu.Lock(); defer mu.Unlock(); return failed }
	for n, i := range wave {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		switch {
		case ctx.Err() != nil:
			notStarted(results, wave[n:], fmt.Errorf("%w: %w", ErrNotStarted, context.Cause(ctx)), opts)
		case opts.FailFast && anyFailed():
			notStarted(results, wave[n:], fmt.Errorf("%w: --fail-fast after a failed cluster", ErrNotStarted), opts)
		default:
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-slots }()
				results[i] = runOne(ctx, results[i].Cluster, w, opts, job)
				if results[i].ClusterFailed {
					mu.Lock()
					failed = true
					mu.Unlock()
				}
			}()
			continue
		}
		break
	}
	wg.Wait()
	return failed
}

// notStarted marks the clusters at indexes as never started, with err.
func notStarted(results []Result, indexes []int, err error, opts Options) {
	for _, i := range indexes {
		r := &results[i]
		r.NotStarted, r.ClusterFailed, r.Err, r.Code = true, true, err, 1
		emit(opts, Event{Context: r.Context, Kind: ClusterNotStarted, Wave: -1, Time: time.Now(), Result: r})
	}
}

func emit(opts Options, e Event) {
	if opts.OnEvent != nil {
		opts.OnEvent(e)
	}
}
