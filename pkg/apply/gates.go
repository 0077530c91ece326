package apply

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/kapply/kapply/pkg/plan"
	"github.com/kapply/kapply/pkg/wait"
)

// DefaultGateTimeout bounds a run's gates together when Options.Timeout
// is zero: every wave of the run must pass its gate within it.
const DefaultGateTimeout = 5 * time.Minute

// gatePoll is how often a gate asks again whether a webhook answers or an
// APIService is available.
const gatePoll = 250 * time.Millisecond

// HealthFunc decides an object's readiness in place of kstatus for the
// kinds it knows (ok false: kstatus decides); see pkg/health.
type HealthFunc func(obj *unstructured.Unstructured) (status kstatus.Status, reason, message string, ok bool)

// gateRun holds a writing run's waves back until their gates pass, all
// within one deadline.
type gateRun struct {
	r        *runner
	gates    []plan.Gate
	deadline time.Time
	health   HealthFunc
}

// newGateRun is the gates of a run that writes, from now; nil when the
// run has one wave.
func (r *runner) newGateRun(gates []plan.Gate) *gateRun {
	if len(gates) < 2 {
		return nil
	}
	timeout := r.opts.Timeout
	if timeout <= 0 {
		timeout = DefaultGateTimeout
	}
	return &gateRun{r: r, gates: gates, deadline: time.Now().Add(timeout), health: r.opts.Waves.Health}
}

// GateError is a wave that was not sent: its gate did not pass (an object
// it waits for failed or was not ready in time, a webhook did not answer).
type GateError struct {
	Wave int
	// Object names what the gate waited for and did not get.
	Object string
	Reason string
}

func (e *GateError) Error() string {
	return fmt.Sprintf("wave %d was not sent: %s %s", e.Wave, e.Object, e.Reason)
}

// pass waits until wave w's gate passes: the objects it names ready (by
// the run's health rules, else kstatus), its APIServices available and
// its webhooks answering a server dry run of the object they probe with.
// objectOf finds a probe's object in the run.
func (g *gateRun) pass(ctx context.Context, w int, objectOf func(plan.ID) *object) error {
	gate := g.gates[w]
	ctx, cancel := context.WithDeadline(ctx, g.deadline)
	defer cancel()
	if err := g.ready(ctx, w, gate.Ready); err != nil {
		return err
	}
	for _, id := range gate.APIServices {
		if err := g.poll(ctx, w, "APIService "+id.Name, "is not Available", func() (bool, error) { return g.available(ctx, id) }); err != nil {
			return err
		}
	}
	for _, hook := range gate.Webhooks {
		what := fmt.Sprintf("webhook %q of %s", hook.Webhook, hook.Configuration)
		o := objectOf(hook.Probe)
		if o == nil {
			return &GateError{Wave: w, Object: what, Reason: fmt.Sprintf("has no object to probe it with (%s is not in the run)", hook.Probe)}
		}
		if err := g.poll(ctx, w, what, "does not answer", func() (bool, error) { return g.answers(ctx, o) }); err != nil {
			return err
		}
	}
	return nil
}

// ready waits for the objects to be ready.
func (g *gateRun) ready(ctx context.Context, w int, ids []plan.ID) error {
	if len(ids) == 0 {
		return nil
	}
	targets := make([]wait.Target, 0, len(ids))
	for _, id := range ids {
		mapping, err := g.r.mapper.RESTMapping(k8sschema.GroupKind{Group: id.Group, Kind: id.Kind}, id.Version)
		if err != nil {
			return &GateError{Wave: w, Object: id.String(), Reason: fmt.Sprintf("cannot be waited for: %v", err)}
		}
		targets = append(targets, wait.Target{Mapping: mapping, Namespace: id.Namespace, Name: id.Name})
	}
	targets = g.notReadyYet(ctx, targets)
	if len(targets) == 0 {
		return nil
	}
	results, err := wait.Ready(ctx, g.r.dynamic, targets, wait.Options{Timeout: time.Until(g.deadline), Retry: g.r.retryTransient, Status: g.health})
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	for _, res := range results {
		if res.Ready() {
			continue
		}
		reason := "is " + strings.ToLower(string(res.Status))
		switch {
		case res.TimedOut || res.Status == kstatus.InProgressStatus:
			reason = fmt.Sprintf("was not ready in time (%s)", res.Status)
		case res.Deleted():
			// The wait cannot tell an object deleted from one never
			// written: an earlier wave's object the server refused.
			reason = "does not exist (it was not applied, or was deleted)"
			res.Message = ""
		}
		if res.Message != "" {
			reason += ": " + res.Message
		}
		return &GateError{Wave: w, Object: res.Target.Ref(), Reason: reason}
	}
	return nil
}

// gateReadLimit is the most objects a gate reads one by one before it
// waits: past it, the wait's one LIST per resource and namespace is
// cheaper than the GETs.
const gateReadLimit = 256

// notReadyYet are the targets that a GET does not find ready now. A
// gate's objects were just written and are often ready already (a
// ConfigMap, a Secret); the wait would LIST their whole namespace once
// per gate — 100 waves of 100 ConfigMaps in one namespace listed 500,000
// objects and allocated 9.5 GB. A target that cannot be read is left to
// the wait.
func (g *gateRun) notReadyYet(ctx context.Context, targets []wait.Target) []wait.Target {
	if len(targets) > gateReadLimit {
		return targets
	}
	ready := make([]bool, len(targets))
	forEachLimit(each(allIndexes(len(targets))), g.r.opts.Parallel, func(i int) {
		t := targets[i]
		client := g.r.dynamic.Resource(t.Mapping.Resource)
		var live *unstructured.Unstructured
		var err error
		if t.Namespace != "" {
			live, err = client.Namespace(t.Namespace).Get(ctx, t.Name, metav1.GetOptions{})
		} else {
			live, err = client.Get(ctx, t.Name, metav1.GetOptions{})
		}
		if err != nil {
			return
		}
		var status kstatus.Status
		ok := false
		if g.health != nil {
			status, _, _, ok = g.health(live)
		}
		if !ok {
			status, _, _ = wait.ComputeStatus(live)
		}
		ready[i] = status == kstatus.CurrentStatus
	})
	var out []wait.Target
	for i, t := range targets {
		if !ready[i] {
			out = append(out, t)
		}
	}
	return out
}

// poll asks check until it says yes, fails, or the deadline passes.
func (g *gateRun) poll(ctx context.Context, w int, what, notYet string, check func() (bool, error)) error {
	tick := time.NewTicker(gatePoll)
	defer tick.Stop()
	var last error
	for {
		ok, err := check()
		switch {
		case ok:
			return nil
		case err != nil:
			last = err
		}
		select {
		case <-ctx.Done():
			reason := notYet + " in time"
			if last != nil {
				reason += ": " + conciseServerError(last).Error()
			}
			return &GateError{Wave: w, Object: what, Reason: reason}
		case <-tick.C:
		}
	}
}

var apiServices = k8sschema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// available tells whether the APIService's Available condition is True.
func (g *gateRun) available(ctx context.Context, id plan.ID) (bool, error) {
	live, err := g.r.dynamic.Resource(apiServices).Get(ctx, id.Name, metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	conditions, _, _ := unstructured.NestedSlice(live.Object, "status", "conditions")
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && m["type"] == "Available" {
			return m["status"] == "True", fmt.Errorf("%v: %v", m["reason"], m["message"])
		}
	}
	return false, nil
}

// answers tells whether the webhooks that intercept o answer: a server
// dry run of o's create reaches them and gets an answer — created,
// refused as existing, denied, invalid — rather than "failed calling
// webhook". A create is sent whether or not o exists: the API server
// admits it before its storage finds the object.
func (g *gateRun) answers(ctx context.Context, o *object) (bool, error) {
	if err := g.r.prepare(ctx, o); err != nil {
		return false, err
	}
	probe := o.Obj.DeepCopy()
	probe.SetResourceVersion("")
	_, err := g.r.resource(o).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldManager: g.r.managerOf(plan.Item{Action: plan.Create})})
	if err == nil || apierrors.IsAlreadyExists(err) {
		return true, nil
	}
	if strings.Contains(err.Error(), "failed calling webhook") || apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsTimeout(err) {
		return false, err
	}
	return true, nil
}

// objectsByID finds the run's objects by their identity (namespace
// settled as ordering settles it).
func (r *runner) objectsByID(objects []*object) func(plan.ID) *object {
	var byID map[plan.ID]*object
	return func(id plan.ID) *object {
		if byID == nil {
			byID = make(map[plan.ID]*object, len(objects))
			for _, o := range objects {
				byID[r.orderNode(o, r.crds).ID] = o
			}
		}
		return byID[id]
	}
}

// allIndexes is 0..n-1.
func allIndexes(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
