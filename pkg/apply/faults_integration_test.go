package apply_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"

	"github.com/kapply/kapply/internal/testcluster"
	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/apply/prune"
	kcluster "github.com/kapply/kapply/pkg/cluster"
	"github.com/kapply/kapply/pkg/lastapplied"
)

// faultRun is one run of apply in a namespace of its own, through the
// given kubeconfig (the cluster's, or a fault proxy's).
type faultRun struct {
	ns, dir, cacheDir string
	// tune is the Applier's retry rule and parallelism for the next runs.
	tune tuning
}

func newFaultRun(t *testing.T) *faultRun {
	t.Helper()
	return &faultRun{ns: cluster.Namespace(t), dir: tempDir(t), cacheDir: tempDir(t)}
}

// write puts manifest in name under the run's directory.
func (f *faultRun) write(t *testing.T, name, manifest string) string {
	t.Helper()
	path := filepath.Join(f.dir, name)
	if err := os.WriteFile(path, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// apply runs kapply on the run's directory through kubeconfig, with opts
// (Files and Namespace filled in) and wrap on the client (nil: none).
func (f *faultRun) apply(t *testing.T, kubeconfig string, opts apply.Options, wrap func(*rest.Config) *rest.Config) []apply.Event {
	t.Helper()
	events, err := f.applyErr(context.Background(), kubeconfig, opts, wrap)
	if err != nil {
		t.Fatalf("kapply: %v", err)
	}
	return events
}

func (f *faultRun) applyErr(ctx context.Context, kubeconfig string, opts apply.Options, wrap func(*rest.Config) *rest.Config) ([]apply.Event, error) {
	flags := genericclioptions.NewConfigFlags(true)
	flags.KubeConfig = &kubeconfig
	flags.CacheDir = &f.cacheDir
	flags.WrapConfigFn = wrap
	opts.Write.Namespace = f.ns
	return runFiles(ctx, flags, []string{f.dir}, opts, f.tune)
}

// manyConfigMaps is n ConfigMaps cm-0 … cm-(n-1) whose data holds version.
func manyConfigMaps(n int, version string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\n  labels: {app: faults}\ndata:\n  version: %q\n  index: \"%d\"\n", i, version, i)
	}
	return b.String()
}

// accountedFor checks that the run reported every object once, as applied
// or failed, each failure naming its object and file; it returns the
// number of failed objects.
func accountedFor(t *testing.T, events []apply.Event, objects int) int {
	t.Helper()
	if len(events) != objects {
		t.Errorf("%d events for %d objects", len(events), objects)
	}
	failed := 0
	for _, ev := range events {
		switch ev.Outcome {
		case apply.Created, apply.Configured, apply.Unchanged, apply.Pruned:
		case apply.Failed:
			failed++
			var objErr *apply.ObjectError
			if !errors.As(ev.Err, &objErr) || objErr.Source.File == "" || objErr.Ref == "" {
				t.Errorf("failure without its object and file: %v", ev.Err)
			}
		default:
			t.Errorf("%v: outcome %s", ev.Err, ev.Outcome)
		}
	}
	return failed
}

// recordsMatchLive checks every ConfigMap of the namespace that carries a
// last-applied record: its data is the record's — no write landed without
// its record, and no record without its write. It returns how many it
// checked.
func recordsMatchLive(t *testing.T, ns string) int {
	t.Helper()
	return recordFieldMatchesLive(t, configMaps, ns, "data")
}

// recordFieldMatchesLive checks field of every object of the resource in
// the namespace that carries a last-applied record against the record.
func recordFieldMatchesLive(t *testing.T, gvr k8sschema.GroupVersionResource, ns, field string) int {
	t.Helper()
	list, err := dyn(t).Resource(gvr).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, obj := range list.Items {
		record, ok := obj.GetAnnotations()[lastapplied.Annotation]
		if !ok {
			continue
		}
		var last map[string]any
		if err := json.Unmarshal([]byte(record), &last); err != nil {
			t.Errorf("%s %s: record %q: %v", gvr.Resource, obj.GetName(), record, err)
			continue
		}
		if live := obj.Object[field]; !reflect.DeepEqual(last[field], live) {
			t.Errorf("%s %s: record says %s %v, live %v", gvr.Resource, obj.GetName(), field, last[field], live)
		}
		checked++
	}
	return checked
}

// converges re-runs kapply without faults: after a run where every object
// applied, the re-run changes nothing; after one where some failed, the
// re-run applies them and the run after it changes nothing.
func (f *faultRun) converges(t *testing.T, opts apply.Options, failedBefore int) {
	t.Helper()
	if failedBefore > 0 {
		for _, ev := range f.apply(t, cluster.Kubeconfig, opts, nil) {
			if ev.Outcome == apply.Failed {
				t.Errorf("re-run: %v", ev.Err)
			}
		}
	}
	for _, ev := range f.apply(t, cluster.Kubeconfig, opts, nil) {
		if ev.Outcome != apply.Unchanged {
			t.Errorf("re-run: %s %s %v, want unchanged", apply.ObjectRef(ev.Object), ev.Outcome, ev.Err)
		}
	}
}

// writes matches the requests that change objects.
func writes(req *http.Request) bool { return req.Method != http.MethodGet }

// firstN faults the first n requests that match, and passes the rest.
func firstN(n int64, match func(*http.Request) bool, fault testcluster.Fault) testcluster.Rule {
	var seen atomic.Int64
	return func(req *http.Request, _ int64) testcluster.Fault {
		if match(req) && seen.Add(1) <= n {
			return fault
		}
		return testcluster.Pass
	}
}

// every faults every k-th request that matches.
func every(k int64, match func(*http.Request) bool, fault testcluster.Fault) testcluster.Rule {
	var seen atomic.Int64
	return func(req *http.Request, _ int64) testcluster.Fault {
		if match(req) && seen.Add(1)%k == 0 {
			return fault
		}
		return testcluster.Pass
	}
}

func method(m string) func(*http.Request) bool {
	return func(req *http.Request) bool { return req.Method == m }
}

// TestRetryWindowEndsA429Storm: a proxy answers every write with 429 and
// Retry-After: 1, forever. The run ends within the retry window (plus one
// attempt), every object failed with an error that says it gave up and
// why; nothing hangs for client-go's ten extra retries per request.
func TestRetryWindowEndsA429Storm(t *testing.T) {
	requireCluster(t)
	f := newFaultRun(t)
	f.write(t, "cms.yaml", manyConfigMaps(3, "1"))
	proxy := cluster.StartProxy(t)
	proxy.SetRule(func(req *http.Request, _ int64) testcluster.Fault {
		if writes(req) {
			return testcluster.Fault{Status: http.StatusTooManyRequests, RetryAfter: 1}
		}
		return testcluster.Pass
	})
	const window = 2 * time.Second
	start := time.Now()
	f.tune = tuning{retryWindow: window}
	events := f.apply(t, proxy.Kubeconfig, apply.Options{}, nil)
	took := time.Since(start)
	if failed := accountedFor(t, events, 3); failed != 3 {
		t.Errorf("%d of 3 failed, want all", failed)
	}
	for _, ev := range events {
		var retryErr *kcluster.RetryError
		if !errors.As(ev.Err, &retryErr) || !strings.Contains(ev.Err.Error(), "the last answered 429 Too Many Requests") || !strings.Contains(ev.Err.Error(), "kapply retries for at most 2s") {
			t.Errorf("error %v: want it to say the server kept answering 429 and kapply gave up", ev.Err)
		}
	}
	if took > window+2*time.Second {
		t.Errorf("the run took %s; window %s", took, window)
	}
	// Three objects, one attempt a second each for 2 s: at most 9 answers,
	// not 3 × 10 × (kapply's attempts) as with client-go's own retries.
	if n := proxy.Count("status"); n > 9 {
		t.Errorf("%d writes answered 429; Retry-After: 1 for %s allows 9", n, window)
	}
	t.Logf("run took %s, %d 429s; %v", took.Round(time.Millisecond), proxy.Count("status"), events[0].Err)

	// The whole API (reads too) answering 429: one error, nothing applied.
	proxy.SetRule(func(*http.Request, int64) testcluster.Fault {
		return testcluster.Fault{Status: http.StatusTooManyRequests, RetryAfter: 1}
	})
	start = time.Now()
	_, err := f.applyErr(context.Background(), proxy.Kubeconfig, apply.Options{}, nil)
	if err == nil || !strings.Contains(err.Error(), "nothing was applied") || time.Since(start) > window+2*time.Second {
		t.Errorf("after %s: %v; want one error saying nothing was applied, within the window", time.Since(start), err)
	}
}

// TestRetryAppliesAfterThree429s: three 429s with Retry-After: 1, then the
// server takes the writes: every object is created, after waiting as told.
func TestRetryAppliesAfterThree429s(t *testing.T) {
	requireCluster(t)
	f := newFaultRun(t)
	f.write(t, "cms.yaml", manyConfigMaps(3, "1"))
	proxy := cluster.StartProxy(t)
	proxy.SetRule(firstN(3, writes, testcluster.Fault{Status: http.StatusTooManyRequests, RetryAfter: 1}))
	start := time.Now()
	events := f.apply(t, proxy.Kubeconfig, apply.Options{}, nil)
	for _, ev := range events {
		if ev.Outcome != apply.Created {
			t.Errorf("%s: %s %v", apply.ObjectRef(ev.Object), ev.Outcome, ev.Err)
		}
	}
	if n := proxy.Count("status"); n != 3 {
		t.Errorf("%d 429s answered, want 3", n)
	}
	if took := time.Since(start); took < time.Second {
		t.Errorf("the run took %s: Retry-After: 1 was not honoured", took)
	}
	recordsMatchLive(t, f.ns)
}

// TestRetryStopsOnCancel: the run's context ends (SIGINT) while every
// write is being retried: the run returns at once, each object failed.
func TestRetryStopsOnCancel(t *testing.T) {
	requireCluster(t)
	f := newFaultRun(t)
	f.write(t, "cms.yaml", manyConfigMaps(3, "1"))
	proxy := cluster.StartProxy(t)
	proxy.SetRule(func(req *http.Request, _ int64) testcluster.Fault {
		if writes(req) {
			return testcluster.Fault{Status: http.StatusServiceUnavailable, RetryAfter: 5}
		}
		return testcluster.Pass
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	wrap := func(c *rest.Config) *rest.Config {
		c.Wrap(func(next http.RoundTripper) http.RoundTripper {
			return roundTripFunc(func(req *http.Request) (*http.Response, error) {
				if writes(req) {
					once.Do(func() { time.AfterFunc(300*time.Millisecond, cancel) })
				}
				return next.RoundTrip(req)
			})
		})
		return c
	}
	start := time.Now()
	f.tune = tuning{retryWindow: time.Minute}
	events, err := f.applyErr(ctx, proxy.Kubeconfig, apply.Options{}, wrap)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("the run took %s; cancelled after about 300ms of a 60s window", took)
	}
	if failed := accountedFor(t, events, 3); failed != 3 {
		t.Errorf("%d of 3 failed, want all", failed)
	}
	for _, ev := range events {
		if !errors.Is(ev.Err, context.Canceled) {
			t.Errorf("%v: want it to say the run was cancelled", ev.Err)
		}
	}
}

// faultCase is one fault the proxy injects into a run of objects.
type faultCase struct {
	name string
	// before, when set, is the file applied (without faults) first.
	before string
	// file is what the faulted run applies.
	file string
	opts apply.Options
	rule testcluster.Rule
	// events is how many the faulted run reports: its objects, and the
	// members it prunes.
	events int
	// failed is how many objects the faulted run reports failed: those
	// whose answers do not say "try again".
	failed int
	// injected is the proxy's count that shows the fault happened.
	injected string
}

// TestFaultsEveryObjectAccountedFor runs apply through a proxy that
// injects one fault per case: bursts of 503, 429, 500, 502 and 504, reset
// connections, delays, and writes the server stored whose answer was lost
// (creates, patches, apply patches, prune deletes, the ApplySet parent).
// Every object is reported applied or failed; answers that say "try again"
// are retried until the object applies; the records on the live objects
// match them; and a re-run without faults converges.
func TestFaultsEveryObjectAccountedFor(t *testing.T) {
	requireCluster(t)
	const n = 8
	pruning := apply.Options{Prune: &prune.Options{ApplySet: "cms"}}
	serverSide := apply.Options{Write: apply.WriteOptions{ServerSide: true}}
	status := func(code, after int) testcluster.Fault { return testcluster.Fault{Status: code, RetryAfter: after} }
	lose := testcluster.Fault{LoseAnswer: true}
	reads := method(http.MethodGet)
	cases := []faultCase{
		{name: "503 on reads and writes", rule: both(firstN(2, reads, status(503, 0)), firstN(4, writes, status(503, 0))), injected: "status"},
		{name: "429 with Retry-After", rule: firstN(3, writes, status(429, 1)), injected: "status"},
		{name: "500 with Retry-After", rule: firstN(3, writes, status(500, 1)), injected: "status"},
		{name: "500 without Retry-After is not retried", rule: firstN(2, writes, status(500, 0)), failed: 2, injected: "status"},
		{name: "502 and 504", rule: both(firstN(2, writes, status(502, 0)), firstN(2, writes, status(504, 0))), injected: "status"},
		{name: "reset connections", rule: both(every(3, reads, testcluster.Fault{Reset: true}), firstN(3, writes, testcluster.Fault{Reset: true})), injected: "reset"},
		{name: "slow answers", rule: every(1, writes, testcluster.Fault{Delay: 50 * time.Millisecond}), injected: "delay"},
		{name: "lost answers to creates", rule: firstN(3, method(http.MethodPost), lose), injected: "lost"},
		{name: "lost answers to patches", before: manyConfigMaps(n, "1"), rule: firstN(3, method(http.MethodPatch), lose), injected: "lost"},
		{name: "lost answers to server-side apply", before: manyConfigMaps(n, "1"), opts: serverSide, rule: firstN(3, method(http.MethodPatch), lose), injected: "lost"},
		{name: "lost answers to prune deletes", before: manyConfigMaps(n, "1"), file: manyConfigMaps(n/2, "1"), opts: pruning,
			rule: firstN(2, method(http.MethodDelete), lose), events: n, injected: "lost"},
		{name: "lost answer to the ApplySet parent", opts: pruning, rule: firstN(1, func(req *http.Request) bool {
			return req.Method == http.MethodPatch && strings.Contains(req.URL.Path, "/secrets/")
		}, lose), injected: "lost"},
	}
	var held atomic.Int64
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			runFaultCase(t, c, n)
			if !t.Failed() {
				held.Add(1)
			}
		})
	}
	t.Cleanup(func() { t.Logf("fault injection: %d cases tried, %d held", len(cases), held.Load()) })
}

func runFaultCase(t *testing.T, c faultCase, n int) {
	f := newFaultRun(t)
	if c.opts.Prune != nil && c.opts.Prune.ApplySet != "" {
		c.opts.Write.Namespace = f.ns
	}
	if c.before != "" {
		f.write(t, "cms.yaml", c.before)
		failOnFailures(t, f.apply(t, cluster.Kubeconfig, c.opts, nil))
	}
	if c.file == "" {
		c.file = manyConfigMaps(n, "2")
	}
	if c.events == 0 {
		c.events = strings.Count(c.file, "kind: ConfigMap")
	}
	f.write(t, "cms.yaml", c.file)
	proxy := cluster.StartProxy(t)
	proxy.SetRule(c.rule)
	f.tune = tuning{retryWindow: 10 * time.Second, backoff: quickBackoff}
	events := f.apply(t, proxy.Kubeconfig, c.opts, nil)
	f.tune = tuning{}
	failed := accountedFor(t, events, c.events)
	if failed != c.failed {
		t.Errorf("%d objects failed, want %d", failed, c.failed)
		for _, ev := range events {
			if ev.Outcome == apply.Failed {
				t.Logf("  %v", ev.Err)
			}
		}
	}
	if proxy.Count(c.injected) == 0 {
		t.Errorf("the proxy injected no %q fault", c.injected)
	}
	recordsMatchLive(t, f.ns)
	f.converges(t, c.opts, failed)
}

// quickBackoff spaces retries 50 ms apart, growing to 500 ms: the tests
// wait for the fault, not for the default's longer gaps.
var quickBackoff = wait.Backoff{Steps: math.MaxInt32, Duration: 50 * time.Millisecond, Factor: 1.5, Cap: 500 * time.Millisecond}

// both asks rule a, then rule b when a passes the request.
func both(a, b testcluster.Rule) testcluster.Rule {
	return func(req *http.Request, n int64) testcluster.Fault {
		if fault := a(req, n); fault != testcluster.Pass {
			return fault
		}
		return b(req, n)
	}
}

// TestApplyAcrossAnAPIServerCrash: the API server and etcd are killed
// (SIGKILL) in the middle of a run and started again on the same port with
// the same data half a second later. Every object is reported applied or
// failed — writes in flight are reset, the next ones find the port closed,
// and all are retried within the window — the records match the live
// objects, and a re-run converges. (The API server alone, killed the same
// way, held as well; it is left out to keep the suite short: the case
// with etcd covers it.)
func TestApplyAcrossAnAPIServerCrash(t *testing.T) {
	requireCluster(t)
	crashMidRun(t, true)
}

func crashMidRun(t *testing.T, withEtcd bool) {
	const n = 60
	f := newFaultRun(t)
	f.write(t, "cms.yaml", manyConfigMaps(n, "1"))
	var sent atomic.Int64
	var crash sync.Once
	restarted := make(chan error, 1)
	var crashedAt time.Time
	wrap := func(c *rest.Config) *rest.Config {
		c.QPS, c.Burst = 500, 1000 // the CLI's defaults; client-go's 5/s would pace the test
		c.Wrap(func(next http.RoundTripper) http.RoundTripper {
			return roundTripFunc(func(req *http.Request) (*http.Response, error) {
				if writes(req) && sent.Add(1) == n/3 {
					crash.Do(func() {
						crashedAt = time.Now()
						up, err := cluster.Down(withEtcd)
						if err != nil {
							restarted <- err
							return
						}
						time.AfterFunc(500*time.Millisecond, func() {
							err := up(context.Background())
							t.Logf("API server ready %s after the crash", time.Since(crashedAt).Round(time.Millisecond))
							restarted <- err
						})
					})
				}
				return next.RoundTrip(req)
			})
		})
		return c
	}
	f.tune = tuning{retryWindow: time.Minute, parallel: 4, backoff: quickBackoff}
	events := f.apply(t, cluster.Kubeconfig, apply.Options{}, wrap)
	ended := time.Now()
	if err := <-restarted; err != nil {
		t.Fatalf("restarting: %v", err)
	}
	t.Logf("run ended %s after the crash", ended.Sub(crashedAt).Round(time.Millisecond))
	if failed := accountedFor(t, events, n); failed != 0 {
		for _, ev := range events {
			if ev.Outcome == apply.Failed {
				t.Errorf("%v", ev.Err)
			}
		}
	}
	if got := recordsMatchLive(t, f.ns); got != n {
		t.Errorf("%d ConfigMaps with a record, want %d", got, n)
	}
	f.converges(t, apply.Options{}, 0)
}
