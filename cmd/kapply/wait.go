package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/wait"
)

// waitReady is apply's --wait: it waits, up to timeout, until every object
// the events applied is ready by kstatus (or health, for the kinds its
// rules name) or failed (deleted by
// another client counts as failed, at once), printing a
// line per object as it gets there, and the rest at the timeout, then a
// summary on stderr. Ready lines go to stdout with the default output,
// else to stderr, so -o name|yaml|json|events stay parseable. Any object failed
// or not ready makes the error, which names them with their reasons. The
// wait is the applier's (Applier.Wait): the run's clients, rate limiter
// and retry rule.
func waitReady(ctx context.Context, applier *apply.Applier, streams genericiooptions.IOStreams,
	events []apply.Event, timeout time.Duration, health apply.HealthFunc, printer *eventPrinter) error {
	targets, _ := apply.WaitTargets(events)
	if len(targets) == 0 {
		return nil
	}
	readyOut := streams.Out
	if printer.output != "" {
		readyOut = streams.ErrOut
	}
	bar := newProgress(streams.ErrOut)
	bar.label = "waiting for readiness:"
	var done atomic.Int64
	// unprinted counts ready lines lost (a closed stdout): each fails the
	// run, as apply's own lines do. OnResult is never called concurrently.
	unprinted := 0
	stop := bar.tick(func() (int, int) { return int(done.Load()), len(targets) })
	warnings := newCommandWarnings(streams.ErrOut)
	results, err := applier.Wait(ctx, events, apply.WaitOptions{Timeout: timeout, Status: health,
		OnWarning: func(text string) {
			bar.clear()
			warnings.printOne(text)
		},
		OnResult: func(_ int, r wait.Result) {
			bar.clear()
			printer.json.wait(r)
			if err := printReadiness(readyOut, streams.ErrOut, r, timeout); err != nil {
				unprinted++
				fmt.Fprintf(streams.ErrOut, "error: %s ready, but printing it failed: %v\n", r.Target.Ref(), err)
			}
			bar.update(int(done.Add(1)), len(targets))
		}})
	stop()
	bar.finish()
	if err != nil {
		return runFailed(err)
	}
	var ready, failed, notReady int
	var bad []string
	for _, r := range results {
		switch {
		case r.Ready():
			ready++
			continue
		case r.Deleted():
			failed++
			bad = append(bad, fmt.Sprintf("%s (failed: %s)", r.Target.Ref(), deletedWhileWaiting))
		case r.Status == kstatus.FailedStatus:
			failed++
			bad = append(bad, fmt.Sprintf("%s (failed: %s)", r.Target.Ref(), reasonOf(r)))
		default:
			notReady++
			what := strings.ToLower(string(r.Status))
			if r.TimedOut {
				what = "timed out"
			}
			bad = append(bad, fmt.Sprintf("%s (%s: %s)", r.Target.Ref(), what, reasonOf(r)))
		}
	}
	fmt.Fprintf(streams.ErrOut, "wait: %d ready, %d failed, %d not ready after %s\n", ready, failed, notReady, timeout)
	if len(bad) > 0 {
		return withCode(exitFailed, fmt.Errorf("%d of %d object(s) not ready: %s", len(bad), len(results), strings.Join(bad, ", ")))
	}
	if unprinted > 0 {
		return withCode(exitFailed, nil)
	}
	return nil
}

// printReadiness prints one object's final line: `deployment.apps/web
// ready` to ready, failures and objects the timeout caught to stderr, with
// the reason and message of the condition that says why. The error is the
// ready line's.
func printReadiness(ready, stderr io.Writer, r wait.Result, timeout time.Duration) error {
	switch {
	case r.Ready():
		_, err := fmt.Fprintf(ready, "%s ready\n", r.Target.Ref())
		return err
	case r.Deleted():
		fmt.Fprintf(stderr, "%s failed: %s\n", r.Target.Ref(), deletedWhileWaiting)
	case r.Status == kstatus.FailedStatus:
		fmt.Fprintf(stderr, "%s failed: %s\n", r.Target.Ref(), explain(r))
	default:
		fmt.Fprintf(stderr, "%s not ready after %s (%s): %s\n", r.Target.Ref(), timeout, r.Status, explain(r))
	}
	return nil
}

// deletedWhileWaiting is the failure of an object another client deleted
// before it was ready: reported at once, not after the timeout.
const deletedWhileWaiting = "deleted while waiting"

func explain(r wait.Result) string {
	switch {
	case r.Reason != "" && r.Message != "":
		return r.Reason + ": " + r.Message
	case r.Reason != "":
		return r.Reason
	}
	return r.Message
}

func reasonOf(r wait.Result) string {
	if r.Reason != "" {
		return r.Reason
	}
	return r.Message
}
