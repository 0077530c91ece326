package wait_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/yaml"

	"github.com/kapply/kapply/internal/fixture"
	"github.com/kapply/kapply/pkg/health"
	kwait "github.com/kapply/kapply/pkg/wait"
)

// healthGroup is the API group of this file's Database CRD (no other test
// of the package uses it).
const healthGroup = "health.wait.example.com"

var databaseMapping = &meta.RESTMapping{
	Resource:         schema.GroupVersionResource{Group: healthGroup, Version: "v1", Resource: "databases"},
	GroupVersionKind: schema.GroupVersionKind{Group: healthGroup, Version: "v1", Kind: "Database"},
	Scope:            meta.RESTScopeNamespace,
}

// databaseRule is a user's health rule for the Database: kstatus alone
// would call it Current the moment it exists.
var databaseRule = health.Rule{APIVersion: healthGroup + "/v1", Kind: "Database",
	Failed: `status.phase == "Broken"`, Current: `status.phase == "Ready"`}

// TestReadyByAHealthRuleWaitsForThePhase: with Options.Status from a
// compiled rule, a Database is not ready when it exists (kstatus's view),
// nor while its status is missing (an evaluation error) or another phase,
// but when its controller writes status.phase=Ready.
func TestReadyByAHealthRuleWaitsForThePhase(t *testing.T) {
	e := newEnv(t)
	e.installDatabaseCRD()
	checker := mustCompileHealth(t, databaseRule)
	db := e.create(databaseMapping, fixture.Database(healthGroup, "db"))
	counter := newWatchCounter()
	var ready atomic.Bool
	done := counter.afterWatching(
		pause(300*time.Millisecond),
		func() error { return e.writeStatus(databaseMapping, "db", `{"phase":"Creating"}`) },
		pause(300*time.Millisecond),
		func() error { ready.Store(true); return nil },
		func() error { return e.writeStatus(databaseMapping, "db", `{"phase":"Ready"}`) })
	var early atomic.Bool
	var seen []string
	results, err := kwait.Ready(context.Background(), counter.client(t), []kwait.Target{e.target(databaseMapping, db)},
		kwait.Options{Timeout: 30 * time.Second, Status: func(obj *unstructured.Unstructured) (kstatus.Status, string, string, bool) {
			s, reason, message, ok := checker.Status(obj)
			seen = append(seen, reason) // the wait's one goroutine for the resource
			return s, reason, message, ok
		}, OnResult: func(int, kwait.Result) { early.Store(!ready.Load()) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	logResults(t, results)
	t.Logf("reasons seen: %v", seen)
	if r := results[0]; !r.Ready() || r.TimedOut || r.Reason != health.ReasonCurrent || !strings.Contains(r.Message, `status.phase == "Ready"`) {
		t.Errorf("db: %s (%s: %s), want Current by the rule's current expression", r.Status, r.Reason, r.Message)
	}
	if early.Load() {
		t.Errorf("db was reported before its phase was Ready")
	}
	if len(seen) == 0 || seen[0] != health.ReasonEvaluationFailed {
		t.Errorf("reasons seen %v: the object without a status is first an evaluation error that keeps waiting", seen)
	}
}

// TestAFailedHealthRuleEndsTheWait: the rule's failed expression ends the
// wait at once as Failed, its message naming the expression.
func TestAFailedHealthRuleEndsTheWait(t *testing.T) {
	e := newEnv(t)
	e.installDatabaseCRD()
	checker := mustCompileHealth(t, databaseRule)
	db := e.create(databaseMapping, fixture.Database(healthGroup, "db"))
	counter := newWatchCounter()
	done := counter.afterWatching(pause(300*time.Millisecond),
		func() error { return e.writeStatus(databaseMapping, "db", `{"phase":"Broken"}`) })
	start := time.Now()
	results, err := kwait.Ready(context.Background(), counter.client(t), []kwait.Target{e.target(databaseMapping, db)},
		kwait.Options{Timeout: 30 * time.Second, Status: checker.Status})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	logResults(t, results)
	r := results[0]
	if r.Status != kstatus.FailedStatus || r.TimedOut || r.Reason != health.ReasonFailed || !strings.Contains(r.Message, "the failed expression `status.phase == \"Broken\"` is true") {
		t.Errorf("db: %s (%s: %s, timed out %v), want Failed naming the failed expression", r.Status, r.Reason, r.Message, r.TimedOut)
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("the wait took %s: a Failed object is final, not waited out", took)
	}
}

func mustCompileHealth(t *testing.T, rules ...health.Rule) *health.Checker {
	t.Helper()
	c, err := health.Compile(rules)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// installDatabaseCRD creates the Database CRD once for the package's tests
// (an existing one is kept) and waits until its resource is served.
func (e *env) installDatabaseCRD() {
	e.t.Helper()
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(fixture.DatabaseCRD(healthGroup)), &crd.Object); err != nil {
		e.t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := e.client.Resource(crdResource).Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		e.t.Fatalf("creating the Database CRD: %v", err)
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := e.client.Resource(databaseMapping.Resource).Namespace(e.ns).List(ctx, metav1.ListOptions{})
		return err == nil, nil
	})
	if err != nil {
		e.t.Fatalf("the Database CRD is not served: %v", err)
	}
}
