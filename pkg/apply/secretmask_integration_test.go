package apply_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/apply/prune"
	"github.com/kapply/kapply/pkg/delete"
)

var (
	validatingPolicies = k8sschema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies"}
	policyBindings     = k8sschema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicybindings"}
)

// The values of the test's Secrets, each denied or warned on by a policy
// that quotes it: none may appear, in any form, in what the library hands
// out. cmValue is a ConfigMap's, whose denial must keep it.
const (
	deniedValue = "hunter2-Kx9-deny-7Q"
	warnedValue = "hunter2-Kx9-warn-3Z"
	keptValue   = "hunter2-Kx9-keep-5M"
	nestedValue = "hunter2-Kx9-nest-8W"
	prunedValue = "hunter2-Kx9-prune-2J"
	cmValue     = "plain-cm-value-77"
)

// TestLibraryMasksSecretValuesInServerText: a program that uses the
// Applier directly and logs what it gets prints no Secret value. On the
// real API server, ValidatingAdmissionPolicies quote a Secret's value (as
// CEL sees it, base64) when they deny its create or update (key
// "policy"), its delete (key "nodelete"), or warn on it (key "warn"); the
// same policy denies a ConfigMap quoting its value; and a server-side
// apply of a stringData value that is no string quotes it as it is.
// Through Apply (client-side and server-side, events returned and given
// to OnEvent), Plan with server dry runs (PlanError, PlanFailure),
// Execute, Delete, Prune and SetLastApplied, no error, returned error,
// server status read with errors.As, or warning holds a Secret value or
// its base64 form; the denials say "***" where they quoted it, and the
// ConfigMap's denial still quotes its value.
func TestLibraryMasksSecretValuesInServerText(t *testing.T) {
	w := newPlanWorld(t, "libmask")
	installQuotingPolicies(t, w.ns)
	ctx := context.Background()
	denied := w.secret("denied", "policy", deniedValue)
	warned := w.secret("warned", "warn", warnedValue)
	kept := w.secret("kept", "nodelete", keptValue)
	cm := w.configMap("cm", map[string]any{"policy": cmValue})

	var mu sync.Mutex
	var told []apply.Event
	onEvent := func(_ int, ev apply.Event) {
		mu.Lock()
		defer mu.Unlock()
		told = append(told, ev)
	}
	objs := func(o ...*unstructured.Unstructured) apply.Input {
		for i := range o {
			o[i] = o[i].DeepCopy()
		}
		return apply.Input{Objects: o}
	}
	events, err := w.applier.Apply(ctx, objs(denied, warned, kept, cm), apply.Options{OnEvent: onEvent})
	noLeak(t, "client-side apply", err, events...)
	noLeak(t, "client-side apply, OnEvent", nil, told...)
	wantMasked(t, "client-side apply of the denied Secret", events[0])
	if ev := events[1]; ev.Outcome != apply.Created || !strings.Contains(strings.Join(ev.Warnings, "\n"), "***") {
		t.Errorf("warned Secret: %v, warnings %q; want created, its value masked in a warning", ev.Outcome, ev.Warnings)
	}
	if ev := events[2]; ev.Outcome != apply.Created {
		t.Fatalf("kept Secret: %v %v", ev.Outcome, ev.Err)
	}
	wantQuoted(t, "client-side apply of the ConfigMap", events[3].Err)

	typed := w.secret("typed", "k", "v")
	typed.Object["stringData"] = map[string]any{"nested": map[string]any{"password": nestedValue}}
	events, err = w.applier.Apply(ctx, objs(denied, cm, typed), apply.Options{Write: apply.WriteOptions{ServerSide: true}})
	noLeak(t, "server-side apply", err, events...)
	wantMasked(t, "server-side apply of the denied Secret", events[0])
	wantQuoted(t, "server-side apply of the ConfigMap", events[1].Err)
	if ev := events[2]; ev.Outcome != apply.Failed || !strings.Contains(fmt.Sprint(ev.Err), `"password":"***"`) {
		t.Errorf("server-side apply of a stringData map: %v, %v; want refused, the value masked", ev.Outcome, ev.Err)
	}

	p, err := w.applier.Plan(ctx, objs(denied, cm), apply.PlanOptions{ServerDryRun: true})
	var planErr *apply.PlanError
	if !errors.As(err, &planErr) || len(planErr.Errs) != 2 {
		t.Fatalf("plan with server dry runs: %v, want a PlanError of two failures", err)
	}
	noLeak(t, "plan with server dry runs", err)
	for _, e := range planErr.Errs {
		var f *apply.PlanFailure
		if !errors.As(e, &f) {
			t.Fatalf("plan failure %v is no PlanFailure", e)
		}
		noLeak(t, "plan failure", e, f.Event)
	}
	wantQuoted(t, "plan of the ConfigMap", planErr.Errs[1])
	for _, it := range p.Items {
		noLeak(t, "plan item warnings", errors.New(strings.Join(it.Warnings, "\n")))
	}

	p, err = w.applier.Plan(ctx, objs(denied), apply.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	told = nil
	events, err = w.applier.Execute(ctx, p, apply.ExecuteOptions{Objects: objs(denied), OnEvent: onEvent})
	noLeak(t, "execute", err, events...)
	noLeak(t, "execute, OnEvent", nil, told...)
	wantMasked(t, "execute of the denied Secret", events[0])

	events, err = w.applier.Delete(ctx, objs(kept), delete.Options{})
	noLeak(t, "delete", err, events...)
	wantMasked(t, "delete of the kept Secret", events[0])

	// Pruning by selector deletes a Secret no input declares: the policy
	// refuses, quoting it.
	labeled := func(u *unstructured.Unstructured) *unstructured.Unstructured {
		u.SetLabels(map[string]string{"libmask-prune": "yes"})
		return u
	}
	anchor := labeled(w.configMap("anchor", map[string]any{"k": "v"}))
	w.mustApply(anchor, labeled(w.secret("pruned", "nodelete", prunedValue)))
	events, err = w.applier.Prune(ctx, objs(anchor), apply.PruneOptions{Namespace: w.ns,
		Options: prune.Options{Selector: "libmask-prune=yes", Allowlist: []string{"core/v1/Secret", "core/v1/ConfigMap"}}})
	noLeak(t, "prune", err, events...)
	if len(events) != 1 {
		t.Fatalf("prune: %d events, want the refused Secret's", len(events))
	}
	wantMasked(t, "prune of the pruned Secret", events[0])

	relabeled := warned.DeepCopy()
	relabeled.SetLabels(map[string]string{"relabeled": "yes"})
	results, err := w.applier.SetLastApplied(ctx, objs(relabeled), apply.SetLastAppliedOptions{})
	if err != nil || len(results) != 1 {
		t.Fatalf("set-last-applied: %v, %d results", err, len(results))
	}
	noLeak(t, "set-last-applied", results[0].Err, apply.Event{Warnings: results[0].Warnings})
	if !strings.Contains(strings.Join(results[0].Warnings, "\n"), "***") {
		t.Errorf("set-last-applied warnings %q: want the policy's, its value masked", results[0].Warnings)
	}
}

func (w *planWorld) secret(name, key, value string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": name, "namespace": w.ns},
		"data":     map[string]any{key: base64.StdEncoding.EncodeToString([]byte(value))}}}
}

// leakForms are the ways a message may write the test's Secret values.
func leakForms() []string {
	var out []string
	for _, v := range []string{deniedValue, warnedValue, keptValue, nestedValue, prunedValue} {
		out = append(out, v, base64.StdEncoding.EncodeToString([]byte(v)))
	}
	return out
}

// noLeak fails t for a Secret value in err or in an event's error or
// warnings, or in the server's status either holds.
func noLeak(t *testing.T, what string, err error, events ...apply.Event) {
	t.Helper()
	texts := statusTexts(err)
	for _, ev := range events {
		texts = append(append(texts, statusTexts(ev.Err)...), ev.Warnings...)
	}
	for _, text := range texts {
		for _, f := range leakForms() {
			if strings.Contains(text, f) {
				t.Errorf("%s: %q holds a Secret value (%s)", what, text, f)
			}
		}
	}
}

// statusTexts are err's text and, when it holds one, the text of the
// server's status as a caller reading it (errors.As) gets it.
func statusTexts(err error) []string {
	texts := []string{fmt.Sprint(err)}
	var status *apierrors.StatusError
	if errors.As(err, &status) {
		texts = append(texts, status.Error())
	}
	return texts
}

// wantMasked fails t unless ev failed with the policy's denial, the value
// masked where it was quoted.
func wantMasked(t *testing.T, what string, ev apply.Event) {
	t.Helper()
	if ev.Outcome != apply.Failed || !strings.Contains(fmt.Sprint(ev.Err), `value *** is not allowed`) {
		t.Errorf("%s: %v, %v; want the policy's denial, the value masked", what, ev.Outcome, ev.Err)
	}
}

// wantQuoted fails t unless err is the policy's denial of the ConfigMap,
// quoting its value: masking is for Secrets.
func wantQuoted(t *testing.T, what string, err error) {
	t.Helper()
	if !strings.Contains(fmt.Sprint(err), "value "+cmValue+" is not allowed") {
		t.Errorf("%s: %v; want the denial to quote the ConfigMap's value", what, err)
	}
}

// installQuotingPolicies installs, for ns, policies that quote what they
// refuse: a Secret's "policy" value (base64 and decoded) on create and
// update, its "nodelete" value on delete, its "warn" value in a warning;
// a ConfigMap's "policy" value. It waits until the server enforces them.
func installQuotingPolicies(t *testing.T, ns string) {
	t.Helper()
	quote := func(obj, key string) string {
		return fmt.Sprintf(`'value ' + string(%s.data['%s']) + ' is not allowed'`, obj, key)
	}
	quotingPolicy(t, ns, "secrets", "[CREATE, UPDATE]", "object", "policy", quote("object", "policy"), "Deny")
	quotingPolicy(t, ns, "secrets", "[DELETE]", "oldObject", "nodelete", quote("oldObject", "nodelete"), "Deny")
	quotingPolicy(t, ns, "secrets", "[CREATE, UPDATE]", "object", "warn", quote("object", "warn"), "Warn")
	quotingPolicy(t, ns, "configmaps", "[CREATE, UPDATE]", "object", "policy", `'value ' + object.data['policy'] + ' is not allowed'`, "Deny")
	awaitPolicies(t, ns)
}

// quotingPolicy installs one policy and its binding to ns, removed when
// the test ends.
func quotingPolicy(t *testing.T, ns, resource, operations, obj, key, message, action string) {
	t.Helper()
	name := fmt.Sprintf("libmask-%s-%s-%s", resource, key, ns)
	createClusterObject(t, validatingPolicies, fmt.Sprintf(`
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: %s}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: %s, resources: [%s]}
  validations:
  - expression: "!has(%[4]s.data) || !('%[5]s' in %[4]s.data)"
    messageExpression: %[6]q
`, name, operations, resource, obj, key, message))
	createClusterObject(t, policyBindings, fmt.Sprintf(`
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: %s}
spec:
  policyName: %[1]s
  validationActions: [%s]
  matchResources:
    namespaceSelector:
      matchLabels: {kubernetes.io/metadata.name: %s}
`, name, action, ns))
}

func createClusterObject(t *testing.T, gvr k8sschema.GroupVersionResource, manifest string) {
	t.Helper()
	obj := map[string]any{}
	if err := yaml.Unmarshal([]byte(manifest), &obj); err != nil {
		t.Fatal(err)
	}
	client := dyn(t).Resource(gvr)
	created, err := client.Create(context.Background(), &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := client.Delete(context.Background(), created.GetName(), metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting %s: %v", created.GetName(), err)
		}
	})
}

// awaitPolicies waits until the server, which compiles new policies in the
// background, denies a server dry run of a Secret create, of a ConfigMap
// create and of a Secret delete, and warns on a Secret create.
func awaitPolicies(t *testing.T, ns string) {
	t.Helper()
	var mu sync.Mutex
	var warned bool
	cfg := rest.CopyConfig(cluster.Config)
	cfg.WarningHandler = warningFunc(func(text string) {
		mu.Lock()
		defer mu.Unlock()
		warned = warned || strings.Contains(text, "is not allowed")
	})
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	probe := func(name, key string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": name, "namespace": ns}, "data": map[string]any{key: "cHJvYmU="}}}
	}
	undeletable, err := client.Resource(secrets).Namespace(ns).Create(ctx, probe("probe-nodelete", "nodelete"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dryRun := []string{metav1.DryRunAll}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, secretErr := client.Resource(secrets).Namespace(ns).Create(ctx, probe("probe", "policy"), metav1.CreateOptions{DryRun: dryRun})
		cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "probe", "namespace": ns}, "data": map[string]any{"policy": "x"}}}
		_, cmErr := client.Resource(configMaps).Namespace(ns).Create(ctx, cm, metav1.CreateOptions{DryRun: dryRun})
		deleteErr := client.Resource(secrets).Namespace(ns).Delete(ctx, undeletable.GetName(), metav1.DeleteOptions{DryRun: dryRun})
		_, warnErr := client.Resource(secrets).Namespace(ns).Create(ctx, probe("probe-warn", "warn"), metav1.CreateOptions{DryRun: dryRun})
		mu.Lock()
		ready := secretErr != nil && cmErr != nil && deleteErr != nil && warnErr == nil && warned
		mu.Unlock()
		if ready {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the policies were not enforced in time: %v; %v; %v; %v, warned %v", secretErr, cmErr, deleteErr, warnErr, warned)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// warningFunc is a rest.WarningHandler.
type warningFunc func(text string)

func (f warningFunc) HandleWarningHeader(_ int, _ string, text string) { f(text) }
