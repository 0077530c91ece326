package fleet

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// runOne runs job on one cluster within ClusterTimeout; a job that has not
// returned AbandonAfter past its deadline is given up (its goroutine ends
// on its own; its outcome is dropped), so a server that accepts
// connections and never answers cannot hold the run.
func runOne(parent context.Context, c Cluster, wave int, opts Options, job job) Result {
	start := time.Now()
	emit(opts, Event{Context: c.Context, Kind: ClusterStarted, Wave: wave, Time: start})
	ctx, cancel := parent, context.CancelFunc(func() {})
	if opts.ClusterTimeout > 0 {
		ctx, cancel = context.WithTimeout(parent, opts.ClusterTimeout)
	}
	defer cancel()
	done := make(chan Outcome, 1)
	go func() { done <- job(ctx, c) }()
	out, abandoned := await(ctx, done, opts.AbandonAfter)
	r := Result{Cluster: c, Outcome: out, Wave: wave, Started: start, Duration: time.Since(start)}
	if parent.Err() == nil && errors.Is(ctx.Err(), context.DeadlineExceeded) && (abandoned || out.ClusterFailed) {
		r.TimedOut, r.ClusterFailed = true, true
		r.Code = max(r.Code, 1)
		r.Err = timeoutError(opts.ClusterTimeout, out.Err)
	}
	emit(opts, Event{Context: c.Context, Kind: ClusterFinished, Wave: wave, Time: time.Now(), Result: &r})
	return r
}

// await is the job's outcome, or after ctx ends and a grace, an abandoned
// failure.
func await(ctx context.Context, done <-chan Outcome, grace time.Duration) (Outcome, bool) {
	select {
	case out := <-done:
		return out, false
	case <-ctx.Done():
	}
	if grace <= 0 {
		grace = DefaultAbandonAfter
	}
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case out := <-done:
		return out, false
	case <-timer.C:
		return Outcome{Code: 1, ClusterFailed: true, Err: fmt.Errorf("given up %s after its context ended: %w", grace, context.Cause(ctx))}, true
	}
}

// timeoutError names the deadline, and what the job said, if anything.
func timeoutError(timeout time.Duration, err error) error {
	if err == nil {
		return fmt.Errorf("timed out after %s (--cluster-timeout)", timeout)
	}
	return fmt.Errorf("timed out after %s (--cluster-timeout): %w", timeout, err)
}
