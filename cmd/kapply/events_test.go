package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapply/kapply/internal/testcluster"
)

// eventsSchema is docs/events.schema.json, compiled once, with formats
// (date-time) asserted.
var eventsSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	f, err := os.Open(filepath.Join("..", "..", "docs", "events.schema.json"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("events.schema.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("events.schema.json")
})

// readEvents validates every line of stdout against the documented schema
// and decodes them; the last must be the summary, and no other.
func readEvents(t *testing.T, stdout string) []jsonEvent {
	t.Helper()
	sch, err := eventsSchema()
	if err != nil {
		t.Fatalf("compiling docs/events.schema.json: %v", err)
	}
	var events []jsonEvent
	for i, line := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(line))
		if err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", i+1, err, line)
		}
		if err := sch.Validate(inst); err != nil {
			t.Fatalf("line %d does not match docs/events.schema.json: %v\n%s", i+1, err, line)
		}
		var ev jsonEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatal(err)
		}
		if ts, err := time.Parse(time.RFC3339Nano, ev.Timestamp); err != nil || time.Since(ts) > time.Hour {
			t.Errorf("line %d: timestamp %q", i+1, ev.Timestamp)
		}
		events = append(events, ev)
	}
	for i, ev := range events {
		if (ev.Type == summaryType) != (i == len(events)-1) {
			t.Fatalf("event %d of %d is a %s: the summary comes last, once\n%s", i+1, len(events), ev.Type, stdout)
		}
	}
	return events
}

// eventLine is an event in a few words, for comparing a run's events.
func eventLine(ev jsonEvent) string {
	line := ev.Type + " " + ev.Status
	if ev.Object != nil {
		line += fmt.Sprintf(" %s/%s/%s %s/%s", ev.Object.Group, ev.Object.Version, ev.Object.Kind, ev.Object.Namespace, ev.Object.Name)
	}
	if ev.Operation != "" {
		line += " " + ev.Operation
	}
	if ev.Source != nil {
		line += " " + filepath.Base(ev.Source.File)
	}
	if ev.DryRun != "" {
		line += " dry-run=" + ev.DryRun
	}
	return line
}

func eventLines(events []jsonEvent) []string {
	lines := make([]string, 0, len(events)-1)
	for _, ev := range events[:len(events)-1] {
		lines = append(lines, eventLine(ev))
	}
	slices.Sort(lines)
	return lines
}

func assertEventLines(t *testing.T, what string, events []jsonEvent, want ...string) {
	t.Helper()
	slices.Sort(want)
	if got := eventLines(events); !slices.Equal(got, want) {
		t.Errorf("%s: events\n%s\nwant\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func assertCounts(t *testing.T, what string, summary jsonEvent, status string, want map[string]int) {
	t.Helper()
	if summary.Status != status {
		t.Errorf("%s: summary status %q, want %q", what, summary.Status, status)
	}
	for outcome, n := range want {
		if summary.Counts[outcome] != n {
			t.Errorf("%s: summary counts %v, want %s: %d", what, summary.Counts, outcome, n)
		}
	}
}

func configMapFile(name, data string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\ndata: {%s}\n", name, data)
}

// TestEventsOfApplyAndPrune: -o events of a create, an unchanged run, a
// prune, a server dry run, a file that cannot be read, and a Secret an
// admission policy denies quoting its value: each line valid by the
// documented schema, names, files and outcomes right, the value masked,
// the summary last with the counts and exit codes as without -o.
func TestEventsOfApplyAndPrune(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"a.yaml": configMapFile("a", "k: v"), "b.yaml": configMapFile("b", "k: v")})
	prune := []string{"apply", "-o", "events", "-f", dir, "-n", ns, "--prune", "--applyset=shop"}
	r := kapply(t, prune...)
	if r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.stderr)
	}
	events := readEvents(t, r.stdout)
	assertEventLines(t, "create", events,
		"ApplyType Successful /v1/ConfigMap "+ns+"/a created a.yaml",
		"ApplyType Successful /v1/ConfigMap "+ns+"/b created b.yaml")
	assertCounts(t, "create", events[len(events)-1], statusSuccessful, map[string]int{"created": 2, "failed": 0, "unchanged": 0})
	if strings.Contains(r.stderr, "created") {
		t.Errorf("kubectl's lines printed besides the events:\n%s", r.stderr)
	}

	if err := os.Remove(filepath.Join(dir, "b.yaml")); err != nil {
		t.Fatal(err)
	}
	r = kapply(t, append(prune, "--dry-run=server")...)
	events = readEvents(t, r.stdout)
	assertEventLines(t, "prune dry run", events,
		"ApplyType Successful /v1/ConfigMap "+ns+"/a unchanged a.yaml dry-run=server",
		"PruneType Successful /v1/ConfigMap "+ns+"/b pruned dry-run=server")
	r = kapply(t, prune...)
	events = readEvents(t, r.stdout)
	assertEventLines(t, "prune", events,
		"ApplyType Successful /v1/ConfigMap "+ns+"/a unchanged a.yaml",
		"PruneType Successful /v1/ConfigMap "+ns+"/b pruned")
	assertCounts(t, "prune", events[len(events)-1], statusSuccessful, map[string]int{"unchanged": 1, "pruned": 1})
	if got := strings.Join(liveConfigMaps(t, ns), ","); r.code != 0 || got != "a" {
		t.Errorf("prune: exit %d, live %s", r.code, got)
	}

	// A reviewed apply (--confirm --yes: plan, table on stderr, execute).
	r = kapply(t, append(prune, "--confirm", "--yes")...)
	events = readEvents(t, r.stdout)
	assertEventLines(t, "confirmed", events, "ApplyType Successful /v1/ConfigMap "+ns+"/a unchanged a.yaml")
	if r.code != 0 {
		t.Errorf("confirmed: exit %d\n%s", r.code, r.stderr)
	}

	// A file that cannot be read: an ErrorType naming it, exit 1.
	bad := writeFiles(t, map[string]string{"bad.yaml": "kind: [\n"})
	r = kapply(t, "apply", "-o", "events", "-f", bad, "-n", ns)
	events = readEvents(t, r.stdout)
	if r.code != exitFailed || events[0].Type != errorType || !strings.Contains(events[0].Error, "bad.yaml") ||
		events[len(events)-1].Status != statusFailed {
		t.Errorf("malformed file: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	quotingPolicy(t, ns)
	denied := writeFiles(t, map[string]string{"s.yaml": fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: policy}\ndata: {policy: %s}\n", b64("hunter2"))})
	deadline := time.Now().Add(30 * time.Second)
	for r = kapply(t, "apply", "-o", "events", "-f", denied, "-n", ns); r.code != exitFailed; r = kapply(t, "apply", "-o", "events", "-f", denied, "-n", ns) {
		if time.Now().After(deadline) {
			t.Fatalf("the Secret was never denied: %s", r.stdout)
		}
		if err := dynClient(t).Resource(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}).Namespace(ns).Delete(t.Context(), "policy", metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	events = readEvents(t, r.stdout)
	assertAbsent(t, "denied Secret's events", r.stdout, []string{"hunter2", b64("hunter2")})
	assertEventLines(t, "denied", events, "ApplyType Failed /v1/Secret "+ns+"/policy failed s.yaml")
	if !strings.Contains(events[0].Error, `secret value "***" is not allowed`) {
		t.Errorf("denied Secret's error %q", events[0].Error)
	}
	assertCounts(t, "denied", events[len(events)-1], statusFailed, map[string]int{"failed": 1})
}

// TestEventsOfApplyWait: apply --wait -o events: a WaitType per object
// (ready; not ready when the timeout caught it, with kstatus' status), the
// run's error, then the summary with the wait's counts, last.
func TestEventsOfApplyWait(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"web.yaml": waitDeployment("web"), "stuck.yaml": waitDeployment("stuck")})
	done := playController(dynClient(t), ns, map[schema.GroupVersionResource]map[string]string{deployments: {"web": availableStatus}})
	r := kapply(t, "apply", "-o", "events", "-f", dir, "-n", ns, "--wait", "--timeout", "6s")
	if err := <-done; err != nil {
		t.Fatalf("controller: %v", err)
	}
	events := readEvents(t, r.stdout)
	assertEventLines(t, "wait", events,
		"ApplyType Successful apps/v1/Deployment "+ns+"/web created web.yaml",
		"ApplyType Successful apps/v1/Deployment "+ns+"/stuck created stuck.yaml",
		"WaitType Successful apps/v1/Deployment "+ns+"/web ready",
		"WaitType Timeout apps/v1/Deployment "+ns+"/stuck not-ready",
		"ErrorType Failed")
	summary := events[len(events)-1]
	if r.code != exitFailed || summary.Status != statusFailed || summary.WaitCounts["ready"] != 1 || summary.WaitCounts["not-ready"] != 1 {
		t.Errorf("exit %d, summary %+v\n%s", r.code, summary, r.stderr)
	}
	for _, ev := range events {
		switch {
		case ev.Type == waitType && ev.Object.Name == "stuck" && ev.Readiness != "InProgress":
			t.Errorf("stuck's readiness %q, want InProgress", ev.Readiness)
		case ev.Type == errorType && !strings.Contains(ev.Error, "1 of 2 object(s) not ready: deployment.apps/stuck"):
			t.Errorf("the run's error %q", ev.Error)
		}
	}
	// The applies come before the waits.
	if events[0].Type != applyType || events[1].Type != applyType {
		t.Errorf("first events %s, %s", events[0].Type, events[1].Type)
	}
}

// TestEventsOfDelete: delete -o events (and with a server dry run): a
// DeleteType per object, a missing object failed with kubectl's error, the
// summary last; -o name prints kubectl delete -o name's lines.
func TestEventsOfDelete(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"a.yaml": configMapFile("a", "k: v"), "b.yaml": configMapFile("b", "k: v")})
	if r := kapply(t, "apply", "-f", dir, "-n", ns); r.code != 0 {
		t.Fatalf("apply: %s", r.stderr)
	}
	r := kapply(t, "delete", "-o", "events", "-f", dir, "-n", ns, "--dry-run=server")
	events := readEvents(t, r.stdout)
	assertEventLines(t, "delete dry run", events,
		"DeleteType Successful /v1/ConfigMap "+ns+"/a deleted a.yaml dry-run=server",
		"DeleteType Successful /v1/ConfigMap "+ns+"/b deleted b.yaml dry-run=server")
	if err := os.Remove(filepath.Join(dir, "b.yaml")); err != nil {
		t.Fatal(err)
	}
	r = kapply(t, "delete", "-o", "events", "-f", dir, "-n", ns, "--wait")
	events = readEvents(t, r.stdout)
	assertEventLines(t, "delete", events, "DeleteType Successful /v1/ConfigMap "+ns+"/a deleted a.yaml")
	assertCounts(t, "delete", events[len(events)-1], statusSuccessful, map[string]int{"deleted": 1, "failed": 0})
	if r.code != 0 || strings.Join(liveConfigMaps(t, ns), ",") != "b" {
		t.Errorf("delete: exit %d, live %v\n%s", r.code, liveConfigMaps(t, ns), r.stderr)
	}
	r = kapply(t, "delete", "-o", "events", "-f", dir, "-n", ns)
	events = readEvents(t, r.stdout)
	assertEventLines(t, "delete missing", events, "DeleteType Failed /v1/ConfigMap "+ns+"/a failed a.yaml")
	if r.code != exitFailed || !strings.Contains(events[0].Error, `configmaps "a" not found`) {
		t.Errorf("delete missing: exit %d, %+v", r.code, events[0])
	}
	assertCounts(t, "delete missing", events[len(events)-1], statusFailed, map[string]int{"failed": 1})
	writeFile(t, dir, "b.yaml", configMapFile("b", "k: v"))
	if r = kapply(t, "delete", "-o", "name", "-f", filepath.Join(dir, "b.yaml"), "-n", ns); r.code != 0 || r.stdout != "configmap/b\n" {
		t.Errorf("delete -o name: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r = kapply(t, "delete", "-o", "yaml", "-f", dir, "-n", ns); r.code != exitFailed || !strings.Contains(r.stderr, `"name" or "events"`) {
		t.Errorf("delete -o yaml: exit %d\n%s", r.code, r.stderr)
	}
}

// TestEventsOfDiff: diff -o events: a DiffType per object with what apply
// would do, whether it differs and the paths that change, a Secret's paths
// without its values; the summary last says whether anything differs, and
// the exit code is diff's.
func TestEventsOfDiff(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	secret := func(password string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: {password: %s, user: %s}\n", b64(password), b64("admin"))
	}
	dir := writeFiles(t, map[string]string{"a.yaml": configMapFile("a", "x: '1'"), "same.yaml": configMapFile("same", "x: '1'"), "s.yaml": secret("old-hunter2")})
	if r := kapply(t, "apply", "-f", dir, "-n", ns); r.code != 0 {
		t.Fatalf("apply: %s", r.stderr)
	}
	r := kapply(t, "diff", "-o", "events", "-f", dir, "-n", ns)
	events := readEvents(t, r.stdout)
	if summary := events[len(events)-1]; r.code != 0 || summary.Differs == nil || *summary.Differs {
		t.Errorf("no change: exit %d, summary %+v", r.code, summary)
	}
	writeFile(t, dir, "a.yaml", configMapFile("a", "x: '2', z: '3'"))
	writeFile(t, dir, "s.yaml", secret("new-hunter2"))
	writeFile(t, dir, "c.yaml", configMapFile("c", "x: '1'"))
	for _, dryRun := range []string{"server", "client"} {
		r = kapply(t, "diff", "-o", "events", "-f", dir, "-n", ns, "--dry-run="+dryRun)
		events = readEvents(t, r.stdout)
		assertAbsent(t, "diff events", r.stdout, []string{"hunter2", b64("old-hunter2"), b64("new-hunter2")})
		assertEventLines(t, "diff "+dryRun, events,
			"DiffType Successful /v1/ConfigMap "+ns+"/a configured a.yaml dry-run="+dryRun,
			"DiffType Successful /v1/ConfigMap "+ns+"/same unchanged same.yaml dry-run="+dryRun,
			"DiffType Successful /v1/ConfigMap "+ns+"/c created c.yaml dry-run="+dryRun,
			"DiffType Successful /v1/Secret "+ns+"/s configured s.yaml dry-run="+dryRun)
		paths := map[string]string{}
		for _, ev := range events[:len(events)-1] {
			paths[ev.Object.Name] = strings.Join(ev.ChangedPaths, " ")
			if differs := ev.Object.Name != "same"; ev.Differs == nil || *ev.Differs != differs {
				t.Errorf("%s: differs %v", ev.Object.Name, ev.Differs)
			}
		}
		if want := map[string]string{"a": "data.x data.z", "s": "data.password", "same": "", "c": ""}; !maps.Equal(paths, want) {
			t.Errorf("changed paths %v, want %v", paths, want)
		}
		summary := events[len(events)-1]
		if r.code != exitDifferences || summary.Differs == nil || !*summary.Differs {
			t.Errorf("diff %s: exit %d, summary %+v\n%s", dryRun, r.code, summary, r.stderr)
		}
		assertCounts(t, "diff", summary, statusSuccessful, map[string]int{"configured": 2, "unchanged": 1, "created": 1})
	}
	// An object the server refuses: an ErrorType naming it and its file,
	// the others still diffed, diff's exit code for an error.
	writeFile(t, dir, "bad.yaml", configMapFile("Bad_Name", "x: '1'"))
	r = kapply(t, "diff", "-o", "events", "-f", dir, "-n", ns)
	events = readEvents(t, r.stdout)
	var refused []string
	for _, ev := range events {
		if ev.Type == errorType && ev.Source != nil && filepath.Base(ev.Source.File) == "bad.yaml" && strings.Contains(ev.Error, "Bad_Name") {
			refused = append(refused, ev.Error)
		}
	}
	if summary := events[len(events)-1]; r.code != exitError || len(refused) != 1 || len(events) != 7 || summary.Status != statusFailed || summary.Counts["failed"] != 1 {
		t.Errorf("diff with a refused object: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r = kapply(t, "diff", "-o", "yaml", "-f", dir, "-n", ns); r.code != exitError {
		t.Errorf("diff -o yaml: exit %d\n%s", r.code, r.stderr)
	}
}

// TestEventsSchemaRefusesWhatIsNotAnEvent: the documented schema the tests
// validate against is strict — a line with an unknown field, type or
// version, an object event without its object, a failure without its
// error, a diff without "differs", a summary without counts, a bad
// timestamp each fail it; a well-formed line passes.
func TestEventsSchemaRefusesWhatIsNotAnEvent(t *testing.T) {
	sch, err := eventsSchema()
	if err != nil {
		t.Fatal(err)
	}
	const head = `"apiVersion":"kapply.dev/v1alpha1","kind":"Event","timestamp":"2026-11-25T19:08:07.45Z","command":"apply"`
	const obj = `"object":{"version":"v1","kind":"ConfigMap","namespace":"ns","name":"a"}`
	const counts = `"counts":{"created":1,"configured":0,"unchanged":0,"pruned":0,"deleted":0,"skipped":0,"failed":0}`
	good := []string{
		`{` + head + `,"type":"ApplyType",` + obj + `,"status":"Successful","operation":"created"}`,
		`{` + head + `,"type":"SummaryType","status":"Successful",` + counts + `}`,
	}
	bad := map[string]string{
		"unknown field":      `{` + head + `,"type":"ApplyType",` + obj + `,"status":"Successful","operation":"created","extra":1}`,
		"unknown type":       `{` + head + `,"type":"InitType","status":"Successful"}`,
		"other version":      strings.Replace(good[0], "v1alpha1", "v1", 1),
		"no object":          `{` + head + `,"type":"ApplyType","status":"Successful","operation":"created"}`,
		"failed, no error":   `{` + head + `,"type":"ApplyType",` + obj + `,"status":"Failed","operation":"failed"}`,
		"diff, no differs":   strings.Replace(`{`+head+`,"type":"DiffType",`+obj+`,"status":"Successful","operation":"created"}`, `"apply"`, `"diff"`, 1),
		"summary, no counts": `{` + head + `,"type":"SummaryType","status":"Successful"}`,
		"bad timestamp":      strings.Replace(good[1], "2026-11-25T19:08:07.45Z", "yesterday", 1),
	}
	for _, line := range good {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(line))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(inst); err != nil {
			t.Errorf("a good line fails: %v\n%s", err, line)
		}
	}
	for what, line := range bad {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(line))
		if err != nil {
			t.Fatal(err)
		}
		if sch.Validate(inst) == nil {
			t.Errorf("%s: passes the schema\n%s", what, line)
		}
	}
}
