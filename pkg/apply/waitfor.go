package apply

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/kapply/kapply/pkg/cluster"
	"github.com/kapply/kapply/pkg/wait"
)

// WaitTargets are the objects the events applied (created, configured or
// unchanged), in the events' order, with their places in events: what
// apply --wait gives wait.Ready.
func WaitTargets(events []Event) (targets []wait.Target, places []int) {
	for i, ev := range events {
		switch ev.Outcome {
		case Created, Configured, Unchanged:
		default:
			continue
		}
		if ev.Object == nil || ev.Mapping == nil {
			continue
		}
		ns := ""
		if ev.Mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			ns = ev.Object.GetNamespace()
			if ev.Result != nil && ev.Result.GetNamespace() != "" {
				ns = ev.Result.GetNamespace()
			}
		}
		t := wait.Target{Mapping: ev.Mapping, Namespace: ns, Name: ev.Object.GetName()}
		if ev.Result != nil {
			t.UID = ev.Result.GetUID()
		}
		targets = append(targets, t)
		places = append(places, i)
	}
	return targets, places
}

// WaitOptions configure Applier.Wait.
type WaitOptions struct {
	// Timeout bounds the whole wait; zero means a minute.
	Timeout time.Duration
	// OnResult, when set, is given each target's result once it is final
	// (see wait.Options.OnResult), with its place among WaitTargets(events).
	OnResult func(index int, r wait.Result)
	// OnWarning, when set, is given each of the server's warnings about
	// the wait's requests (a deprecated API version's LIST), once, when the
	// wait ends, with the values of the events' Secrets masked.
	OnWarning func(text string)
	// Status, when set, decides the readiness of the kinds it knows in
	// place of kstatus (WaveOptions.Health).
	Status HealthFunc
}

// Wait waits until the objects the events applied (WaitTargets) are ready
// or failed, as kstatus computes it (wait.Ready), through the Applier's
// dynamic client and retry rule (pkg/cluster's, as every run's). Results
// come in the targets' order, each naming its target.
func (a *Applier) Wait(ctx context.Context, events []Event, opts WaitOptions) ([]wait.Result, error) {
	targets, _ := WaitTargets(events)
	if len(targets) == 0 {
		return nil, nil
	}
	c := a.clients
	retry := cluster.NewRetries(c.Backoff, c.RetryWindow, c.RequestTimeout).Do
	ctx, sink := cluster.WithWarningSink(ctx)
	results, err := wait.Ready(ctx, c.Dynamic, targets, wait.Options{Timeout: opts.Timeout, Retry: retry, OnResult: opts.OnResult, Status: opts.Status})
	if opts.OnWarning != nil {
		var known cluster.Secrets
		for _, ev := range events {
			known.Add(ev.Object, ev.Live, ev.Result)
		}
		for _, text := range sink.Texts() {
			opts.OnWarning(known.Text(text))
		}
	}
	return results, err
}
