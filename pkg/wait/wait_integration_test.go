package wait_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/kapply/kapply/pkg/wait"
)

// TestReadyWhenTheDeploymentBecomesAvailable: a Deployment the controller
// reports progressing, then available, is ready at the second write and
// not before.
func TestReadyWhenTheDeploymentBecomesAvailable(t *testing.T) {
	e := newEnv(t)
	web := e.create(deploymentMapping, deploymentYAML("web"))
	counter := newWatchCounter()
	var available atomic.Bool
	done := counter.afterWatching(
		func() error { return e.writeStatus(deploymentMapping, "web", deploymentProgressing) },
		pause(300*time.Millisecond),
		func() error { available.Store(true); return nil },
		func() error { return e.writeStatus(deploymentMapping, "web", deploymentAvailable) })
	var early atomic.Bool
	results, err := wait.Ready(context.Background(), counter.client(t), []wait.Target{e.target(deploymentMapping, web)},
		wait.Options{Timeout: 30 * time.Second, OnResult: func(int, wait.Result) { early.Store(!available.Load()) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	logResults(t, results)
	if r := results[0]; !r.Ready() || r.TimedOut || r.Object == nil {
		t.Errorf("web: %s (%s: %s), want Current with the object", r.Status, r.Reason, r.Message)
	}
	if early.Load() {
		t.Errorf("web was reported before it was available")
	}
}

// TestDeletedWaitsForTheFinalizer: a ConfigMap held by a finalizer is
// Terminating; the deletion wait ends when the finalizer is removed, not
// before.
func TestDeletedWaitsForTheFinalizer(t *testing.T) {
	e := newEnv(t)
	held := e.create(configMapMapping, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: held, finalizers: [example.com/hold]}\n")
	configMaps := e.client.Resource(configMapMapping.Resource).Namespace(e.ns)
	if err := configMaps.Delete(context.Background(), "held", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	counter := newWatchCounter()
	var released atomic.Bool
	done := counter.afterWatching(pause(500*time.Millisecond), func() error {
		released.Store(true)
		_, err := configMaps.Patch(context.Background(), "held", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		return err
	})
	var early atomic.Bool
	results, err := wait.Deleted(context.Background(), counter.client(t), []wait.Target{e.target(configMapMapping, held)},
		wait.Options{Timeout: 30 * time.Second, OnResult: func(int, wait.Result) { early.Store(!released.Load()) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	logResults(t, results)
	if r := results[0]; !r.Deleted() || r.TimedOut {
		t.Errorf("held: %s (%s), want Deleted", r.Status, r.Reason)
	}
	if early.Load() {
		t.Errorf("held was reported deleted while its finalizer held it")
	}
}

// TestAnObjectCreatedAgainIsAnotherObject: a ConfigMap deleted and created
// again under its name has another UID. A deletion wait counts the one
// meant as gone — by its UID when the wait's first LIST already holds the
// new one, or, without a UID, by the deletion it watched — and a readiness
// wait reports it deleted, never ready. (A target without a UID pinned to
// the first object seen: TestObserveTakesTheFirstUIDSeen.)
func TestAnObjectCreatedAgainIsAnotherObject(t *testing.T) {
	const manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\n"
	for _, tc := range []struct {
		name    string
		waitFor func(context.Context, dynamic.Interface, []wait.Target, wait.Options) ([]wait.Result, error)
		withUID bool
	}{
		{"deletion, UID given", wait.Deleted, true},
		{"deletion, no UID, watched", wait.Deleted, false},
		{"readiness, UID given", wait.Ready, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			cfg := e.create(configMapMapping, manifest)
			target := e.target(configMapMapping, cfg)
			if !tc.withUID {
				target.UID = ""
			}
			recreate := func() error {
				if err := e.client.Resource(configMapMapping.Resource).Namespace(e.ns).Delete(context.Background(), "cfg", metav1.DeleteOptions{}); err != nil {
					return err
				}
				e.create(configMapMapping, manifest)
				return nil
			}
			counter := newWatchCounter()
			var done <-chan error
			if tc.withUID {
				// Before the wait: its first LIST already holds the new one.
				if err := recreate(); err != nil {
					t.Fatal(err)
				}
				done = counter.afterWatching()
			} else {
				// The wait must have seen the first one.
				done = counter.afterWatching(pause(300*time.Millisecond), recreate)
			}
			start := time.Now()
			results, err := tc.waitFor(context.Background(), counter.client(t), []wait.Target{target}, wait.Options{Timeout: 20 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			logResults(t, results)
			if r := results[0]; !r.Deleted() || r.Ready() || r.TimedOut {
				t.Errorf("cfg: %s (%s), want Deleted", r.Status, r.Reason)
			}
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("took %s: a re-created object must end the wait at once", took)
			}
		})
	}
}

// TestReadySurvivesAServerRestart: the API server is killed while the
// wait watches and started again; the informer watches again and the
// wait sees the Deployment become available after the restart.
func TestReadySurvivesAServerRestart(t *testing.T) {
	e := newEnv(t)
	web := e.create(deploymentMapping, deploymentYAML("web"))
	counter := newWatchCounter()
	restarted := make(chan struct{})
	done := counter.afterWatching(pause(200*time.Millisecond), func() error {
		up, err := cluster.Down(false)
		if err != nil {
			return err
		}
		time.Sleep(time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := up(ctx); err != nil {
			return err
		}
		close(restarted)
		return e.writeStatus(deploymentMapping, "web", deploymentAvailable)
	})
	var early atomic.Bool
	results, err := wait.Ready(context.Background(), counter.client(t), []wait.Target{e.target(deploymentMapping, web)},
		wait.Options{Timeout: 90 * time.Second, OnResult: func(int, wait.Result) {
			select {
			case <-restarted:
			default:
				early.Store(true)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	logResults(t, results)
	if r := results[0]; !r.Ready() || r.TimedOut {
		t.Errorf("web: %s (%s: %s, timed out %v), want Current after the restart", r.Status, r.Reason, r.Message, r.TimedOut)
	}
	if early.Load() {
		t.Errorf("web was reported before the server came back")
	}
	if n := counter.watches.Load(); n < 2 {
		t.Errorf("%d WATCH requests, want another after the restart", n)
	}
}

// TestTimeoutNamesTheObjectsNotReady: two Deployments no controller rolls
// out and a ConfigMap: the ConfigMap is ready at once, the Deployments are
// reported at the timeout, by name, InProgress with kstatus's reason.
func TestTimeoutNamesTheObjectsNotReady(t *testing.T) {
	e := newEnv(t)
	targets := []wait.Target{
		e.target(deploymentMapping, e.create(deploymentMapping, deploymentYAML("stuck1"))),
		e.target(configMapMapping, e.create(configMapMapping, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\n")),
		e.target(deploymentMapping, e.create(deploymentMapping, deploymentYAML("stuck2"))),
	}
	var order []string
	start := time.Now()
	results, err := wait.Ready(context.Background(), e.client, targets, wait.Options{Timeout: 2 * time.Second,
		OnResult: func(_ int, r wait.Result) { order = append(order, r.Target.Ref()) }})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	logResults(t, results)
	for _, i := range []int{0, 2} {
		r := results[i]
		if r.Status != kstatus.InProgressStatus || !r.TimedOut || r.Reason == "" || r.Message == "" {
			t.Errorf("%s: %s (%s: %s, timed out %v), want InProgress, timed out, with a reason", r.Target.Ref(), r.Status, r.Reason, r.Message, r.TimedOut)
		}
	}
	if !results[1].Ready() {
		t.Errorf("cfg: %s, want Current", results[1].Status)
	}
	if got, want := strings.Join(order, " "), "configmap/cfg deployment.apps/stuck1 deployment.apps/stuck2"; got != want {
		t.Errorf("reported %s, want %s (the ready one first, the stuck ones at the timeout, in order)", got, want)
	}
	if took < 2*time.Second || took > 5*time.Second {
		t.Errorf("the wait took %s, want the 2s timeout", took)
	}
}

// TestRetryGivesUpOnAForbiddenList: a LIST the caller's retry rule gives
// up on (Forbidden) ends the wait for its objects at once, status Unknown;
// the others are still waited for.
func TestRetryGivesUpOnAForbiddenList(t *testing.T) {
	e := newEnv(t)
	cfg := e.create(configMapMapping, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\n")
	restricted := rest.CopyConfig(cluster.Config)
	restricted.Impersonate = rest.ImpersonationConfig{UserName: "nobody"}
	client, err := dynamic.NewForConfig(restricted)
	if err != nil {
		t.Fatal(err)
	}
	var tries atomic.Int64
	once := func(_ context.Context, request func() error) error { tries.Add(1); return request() }
	start := time.Now()
	results, err := wait.Ready(context.Background(), client, []wait.Target{e.target(configMapMapping, cfg)},
		wait.Options{Timeout: 20 * time.Second, Retry: once})
	if err != nil {
		t.Fatal(err)
	}
	logResults(t, results)
	r := results[0]
	if r.Status != kstatus.UnknownStatus || r.Reason != wait.ReasonListFailed || !strings.Contains(r.Message, "forbidden") || r.TimedOut {
		t.Errorf("cfg: %s (%s: %s), want Unknown, %s, forbidden", r.Status, r.Reason, r.Message, wait.ReasonListFailed)
	}
	if took := time.Since(start); took > 5*time.Second || tries.Load() != 1 {
		t.Errorf("%d LISTs in %s, want one, and the wait over at once", tries.Load(), took)
	}
}

// TestCancelledContextEndsTheWait: the caller's context ending before the
// timeout ends the wait at once, with its error.
func TestCancelledContextEndsTheWait(t *testing.T) {
	e := newEnv(t)
	web := e.create(deploymentMapping, deploymentYAML("web"))
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	start := time.Now()
	_, err := wait.Ready(ctx, e.client, []wait.Target{e.target(deploymentMapping, web)}, wait.Options{Timeout: 30 * time.Second})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %s after a cancel at 500ms", took)
	}
}

// TestDeletedCountsAResourceNoLongerServed: an object whose resource the
// server no longer serves (its CRD removed) is deleted, as kubectl's
// `wait --for=delete` counts a 404; with or without the caller's retry,
// the wait does not fail or wait out its timeout.
func TestDeletedCountsAResourceNoLongerServed(t *testing.T) {
	e := newEnv(t)
	gone := &meta.RESTMapping{
		Resource:         schema.GroupVersionResource{Group: "removed.example.com", Version: "v1", Resource: "widgets"},
		GroupVersionKind: schema.GroupVersionKind{Group: "removed.example.com", Version: "v1", Kind: "Widget"},
		Scope:            meta.RESTScopeNamespace,
	}
	targets := []wait.Target{{Mapping: gone, Namespace: e.ns, Name: "w", UID: "u-1"}}
	once := func(_ context.Context, request func() error) error { return request() }
	for _, retry := range []func(context.Context, func() error) error{once, nil} {
		start := time.Now()
		results, err := wait.Deleted(context.Background(), e.client, targets, wait.Options{Timeout: 10 * time.Second, Retry: retry})
		if err != nil {
			t.Fatal(err)
		}
		logResults(t, results)
		if !results[0].Deleted() || time.Since(start) > 5*time.Second {
			t.Errorf("retry %v: %s (%s) after %s; want Deleted at once", retry != nil, results[0].Status, results[0].Reason, time.Since(start))
		}
	}
}
