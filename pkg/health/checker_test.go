package health_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/yaml"

	"github.com/kapply/kapply/pkg/health"
)

// TestCompileRefuses: a compile error names the rule, its field and CEL's
// message.
func TestCompileRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		rule health.Rule
		want []string
	}{
		{"syntax error in current", health.Rule{APIVersion: "example.com/v1", Kind: "Database", Current: "status.phase =="},
			[]string{"health rule [1] (example.com/v1 Database) current: compiling:", "Syntax error"}},
		{"syntax error in failed", health.Rule{APIVersion: "example.com/v1", Kind: "Database", Current: "true", Failed: "status.phase == 'a"},
			[]string{"health rule [1] (example.com/v1 Database) failed: compiling:", "Syntax error"}},
		{"bad macro in inProgress", health.Rule{APIVersion: "example.com/v1", Kind: "Database", Current: "true", InProgress: "status.conditions.all(1, true)"},
			[]string{"health rule [1] (example.com/v1 Database) inProgress: compiling:", "argument must be a simple name"}},
		{"no current", health.Rule{APIVersion: "example.com/v1", Kind: "Database", Failed: "true"},
			[]string{"health rule [1] (example.com/v1 Database) current: is required"}},
		{"duplicate", health.Rule{APIVersion: "v1", Kind: "ConfigMap", Current: "true"},
			[]string{"health rule [1] (v1 ConfigMap)", "second rule for ConfigMap"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rules := []health.Rule{{APIVersion: "v1", Kind: "ConfigMap", Current: "has(data.ready)"}, tc.rule}
			_, err := health.Compile(rules)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			var ruleErr *health.RuleError
			if !errors.As(err, &ruleErr) {
				t.Errorf("error %q is no *health.RuleError", err)
			}
		})
	}
}

// databaseRule is the rule of the tests: a Database is migrating, broken
// or ready by its status.phase.
var databaseRule = health.Rule{APIVersion: "example.com/v1", Kind: "Database",
	InProgress: `status.phase == "Migrating"`, Failed: `status.phase == "Broken"`, Current: `status.phase == "Ready"`}

func mustCompile(t *testing.T, rules ...health.Rule) *health.Checker {
	t.Helper()
	c, err := health.Compile(rules)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// object is manifest decoded as a client decodes the server's JSON
// (integers are int64).
func object(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	data, err := yaml.YAMLToJSON([]byte(manifest))
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	return obj
}

// TestStatusEvaluatesInFluxsOrder: inProgress, then failed, then current;
// the first true decides, whichever others are true too; none true keeps
// waiting. The message names the expression that decided.
func TestStatusEvaluatesInFluxsOrder(t *testing.T) {
	allTrue := health.Rule{APIVersion: "example.com/v1", Kind: "Database", InProgress: "status.a", Failed: "status.b", Current: "status.c"}
	for _, tc := range []struct {
		name        string
		rule        health.Rule
		status      string
		want        kstatus.Status
		wantReason  string
		wantMessage string
	}{
		{"ready", databaseRule, "{phase: Ready}", kstatus.CurrentStatus, health.ReasonCurrent, "the current expression `status.phase == \"Ready\"` is true"},
		{"broken", databaseRule, "{phase: Broken}", kstatus.FailedStatus, health.ReasonFailed, "the failed expression `status.phase == \"Broken\"` is true"},
		{"migrating", databaseRule, "{phase: Migrating}", kstatus.InProgressStatus, health.ReasonInProgress, "the inProgress expression `status.phase == \"Migrating\"` is true"},
		{"none true", databaseRule, "{phase: Creating}", kstatus.InProgressStatus, health.ReasonNotCurrent, "the current expression `status.phase == \"Ready\"` is not true yet"},
		{"all true: inProgress wins", allTrue, "{a: true, b: true, c: true}", kstatus.InProgressStatus, health.ReasonInProgress, "`status.a`"},
		{"failed and current true: failed wins", allTrue, "{a: false, b: true, c: true}", kstatus.FailedStatus, health.ReasonFailed, "`status.b`"},
		{"only current true", allTrue, "{a: false, b: false, c: true}", kstatus.CurrentStatus, health.ReasonCurrent, "`status.c`"},
		{"an expression of several lines is Go-quoted, on the message's line", health.Rule{APIVersion: "example.com/v1", Kind: "Database", Current: "status.c &&\n  true"},
			"{c: true}", kstatus.CurrentStatus, health.ReasonCurrent, `the current expression "status.c &&\n  true" is true`},
		{"current only, no other expressions", health.Rule{APIVersion: "example.com/v1", Kind: "Database", Current: "status.c"}, "{c: true}",
			kstatus.CurrentStatus, health.ReasonCurrent, "`status.c`"},
		{"a later expression is not evaluated once one decides", health.Rule{APIVersion: "example.com/v1", Kind: "Database", Failed: "status.b", Current: "status.nosuch"},
			"{b: true}", kstatus.FailedStatus, health.ReasonFailed, "`status.b`"},
		{"generation not observed: the expressions are not asked", databaseRule, "{phase: Ready, observedGeneration: 1}",
			kstatus.InProgressStatus, health.ReasonGenerationNotObserved, "status.observedGeneration 1 is not metadata.generation 2"},
		{"generation observed", databaseRule, "{phase: Ready, observedGeneration: 2}", kstatus.CurrentStatus, health.ReasonCurrent, "`status.phase == \"Ready\"`"},
		{"Kubernetes' libraries: quantity", health.Rule{APIVersion: "example.com/v1", Kind: "Database", Current: `quantity(status.size).isGreaterThan(quantity("1Gi"))`},
			"{size: 2Gi}", kstatus.CurrentStatus, health.ReasonCurrent, "quantity"},
		{"metadata is a variable", health.Rule{APIVersion: "example.com/v1", Kind: "Database", Current: `metadata.generation == 2 && metadata.name == "db"`},
			"{}", kstatus.CurrentStatus, health.ReasonCurrent, "metadata.generation"},
		{"conditions, as Flux's cheatsheet writes them", health.Rule{APIVersion: "example.com/v1", Kind: "Database",
			Failed:  "status.conditions.filter(e, e.type == 'Ready').all(e, e.observedGeneration == metadata.generation && e.status == 'False')",
			Current: "status.conditions.filter(e, e.type == 'Ready').all(e, e.observedGeneration == metadata.generation && e.status == 'True')"},
			"{conditions: [{type: Ready, status: 'True', observedGeneration: 2}]}", kstatus.CurrentStatus, health.ReasonCurrent, "the current expression"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := mustCompile(t, tc.rule)
			obj := object(t, "apiVersion: example.com/v1\nkind: Database\nmetadata: {name: db, generation: 2}\nstatus: "+tc.status+"\n")
			s, reason, message, ok := c.Status(obj)
			if !ok || s != tc.want || reason != tc.wantReason || !strings.Contains(message, tc.wantMessage) {
				t.Errorf("Status = %s, %q, %q, %v; want %s, %q, a message with %q", s, reason, message, ok, tc.want, tc.wantReason, tc.wantMessage)
			}
		})
	}
}

// TestStatusEvaluationErrorsKeepWaiting: a field the object lacks is an
// error in CEL, as in Flux (no implicit null); it counts as in progress,
// with CEL's error naming the field as the message. has() and optional
// fields are how a rule says "not yet" instead.
func TestStatusEvaluationErrorsKeepWaiting(t *testing.T) {
	for _, tc := range []struct {
		name, current, status string
		want                  kstatus.Status
		wantReason            string
		wantMessage           []string
	}{
		{"no status at all", `status.phase == "Ready"`, "", kstatus.InProgressStatus, health.ReasonEvaluationFailed,
			[]string{"evaluating the current expression `status.phase == \"Ready\"`", "no such attribute(s): status.phase"}},
		{"status without the field", `status.phase == "Ready"`, "status: {}", kstatus.InProgressStatus, health.ReasonEvaluationFailed,
			[]string{`evaluating the current expression`, "no such key: phase"}},
		{"has() guards a field of status", `has(status.phase) && status.phase == "Ready"`, "status: {}", kstatus.InProgressStatus, health.ReasonNotCurrent,
			[]string{"is not true yet"}},
		{"has() does not guard a missing top-level field", `has(status.phase) && status.phase == "Ready"`, "", kstatus.InProgressStatus, health.ReasonEvaluationFailed,
			[]string{"no such attribute(s): status.phase"}},
		{"an optional field", `status.?phase.orValue("") == "Ready"`, "status: {}", kstatus.InProgressStatus, health.ReasonNotCurrent, []string{"is not true yet"}},
		{"not a bool", `status.phase`, "status: {phase: Ready}", kstatus.InProgressStatus, health.ReasonEvaluationFailed,
			[]string{"the current expression `status.phase` is a string, not a bool"}},
		{"wrong types", `status.phase == 1`, "status: {phase: Ready}", kstatus.InProgressStatus, health.ReasonNotCurrent, []string{"is not true yet"}},
		{"a runaway expression is stopped", `lists.range(1000000).all(i, i >= 0)`, "status: {}",
			kstatus.InProgressStatus, health.ReasonEvaluationFailed, []string{"operation interrupted"}},
		{"no such function", `status.phase.nosuch()`, "status: {phase: Ready}", kstatus.InProgressStatus, health.ReasonEvaluationFailed, []string{"nosuch"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := mustCompile(t, health.Rule{APIVersion: "example.com/v1", Kind: "Database", Current: tc.current})
			obj := object(t, "apiVersion: example.com/v1\nkind: Database\nmetadata: {name: db}\n"+tc.status+"\n")
			s, reason, message, ok := c.Status(obj)
			if !ok || s != tc.want || reason != tc.wantReason {
				t.Errorf("Status = %s, %q, %q, %v; want %s, %q", s, reason, message, ok, tc.want, tc.wantReason)
			}
			for _, w := range tc.wantMessage {
				if !strings.Contains(message, w) {
					t.Errorf("message %q does not say %q", message, w)
				}
			}
		})
	}
}

// TestStatusLeavesOtherKindsToKstatus: a rule is for its group and kind,
// whatever the version (as Flux matches); other kinds are not its.
func TestStatusLeavesOtherKindsToKstatus(t *testing.T) {
	c := mustCompile(t, databaseRule)
	for _, tc := range []struct {
		manifest string
		want     bool
	}{
		{"apiVersion: example.com/v1\nkind: Database\nmetadata: {name: db}\nstatus: {phase: Ready}\n", true},
		{"apiVersion: example.com/v2\nkind: Database\nmetadata: {name: db}\nstatus: {phase: Ready}\n", true},
		{"apiVersion: other.example.com/v1\nkind: Database\nmetadata: {name: db}\n", false},
		{"apiVersion: example.com/v1\nkind: Table\nmetadata: {name: t}\n", false},
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n", false},
	} {
		if _, _, _, ok := c.Status(object(t, tc.manifest)); ok != tc.want {
			t.Errorf("%s: ok %v, want %v", strings.SplitN(tc.manifest, "\nmetadata", 2)[0], ok, tc.want)
		}
	}
}

// TestStatusNeverShowsASecretsValue: CEL's error may quote a value it
// read, and an expression may hold one; a Secret's value is masked.
func TestStatusNeverShowsASecretsValue(t *testing.T) {
	const manifest = "apiVersion: v1\nkind: %s\nmetadata: {name: s}\ndata: {timeout: '%s'}\n"
	for _, tc := range []struct{ name, current, shown string }{
		{"quoted by CEL's error", `"x".matches(data.timeout)`, "hunter2("},
		{"in the expression", `data.timeout == "aHVudGVyMg=="`, "aHVudGVyMg=="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := mustCompile(t, health.Rule{APIVersion: "v1", Kind: "Secret", Current: tc.current},
				health.Rule{APIVersion: "v1", Kind: "ConfigMap", Current: tc.current})
			// On a ConfigMap the message shows the text: the masking is
			// what hides it on the Secret.
			_, _, message, _ := c.Status(object(t, fmt.Sprintf(manifest, "ConfigMap", tc.shown)))
			if !strings.Contains(message, tc.shown) {
				t.Fatalf("the ConfigMap's message %q does not show %q: the test checks nothing", message, tc.shown)
			}
			_, _, message, _ = c.Status(object(t, fmt.Sprintf(manifest, "Secret", tc.shown)))
			if strings.Contains(message, tc.shown) || !strings.Contains(message, "***") {
				t.Errorf("the Secret's value shows: %q", message)
			}
		})
	}
}
