package apply_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/plan"
)

// A patch that replaces a list or map whole carries live's content as the
// plan read it: executing a plan after another writer added to it would
// drop the addition (issue 30, item 1). These tests run Applier.Execute on
// a plan saved and read back, as apply --plan does.

// decodeIn decodes one object of manifest into namespace ns.
func decodeIn(t *testing.T, ns, manifest string) *unstructured.Unstructured {
	t.Helper()
	objs, err := decodeAll(manifest)
	if err != nil || len(objs) != 1 {
		t.Fatalf("decoding %s: %v", manifest, err)
	}
	objs[0].SetNamespace(ns)
	return objs[0]
}

// wantRefusedNaming checks that ev is a refusal, a *plan.ChangedError
// naming exactly path.
func wantRefusedNaming(t *testing.T, ev apply.Event, path string) {
	t.Helper()
	var changed *plan.ChangedError
	if ev.Outcome != apply.Failed || !errors.As(ev.Err, &changed) || len(changed.Fields) != 1 || changed.Fields[0].String() != path {
		t.Errorf("%s: %s %v, want refused with a ChangedError naming %s", ev.Object.GetName(), ev.Outcome, ev.Err, path)
	}
}

// TestExecuteRefusesAnElementAddedToAKeyedList: a custom resource's keyed
// list (x-kubernetes-list-type: map) goes whole in its merge patch; a rule
// a controller adds after the plan makes Execute refuse the item, naming
// spec.rules, and keep the rule; the plan's other item is written.
func TestExecuteRefusesAnElementAddedToAKeyedList(t *testing.T) {
	w := newPlanWorld(t, "plan-keyed-list")
	k := newKeyedKind(t)
	k.createCRD(t)
	awaitOpenAPIHas(t, k.group, "x-kubernetes-list-map-keys")
	w.mustApply(decodeIn(t, w.ns, k.route("a1")), w.configMap("other", map[string]any{"k": "1"}))
	p := w.plan(decodeIn(t, w.ns, k.route("a2")), w.configMap("other", map[string]any{"k": "2"}))
	k.controllerAdds(t, w.ns)
	p, _ = w.roundTrip(p)
	events := w.execute(p, apply.ExecuteOptions{})
	wantRefusedNaming(t, events[0], "spec.rules")
	if events[1].Outcome != apply.Configured || events[1].Err != nil {
		t.Errorf("other: %s %v, want configured", events[1].Outcome, events[1].Err)
	}
	k.assertRules(t, w.ns, map[string]any{"a": "a1", "b": "b1", "ctrl": "c1"})
	if got := dataOf(w.read(configMaps, "other"), "k"); got != "2" {
		t.Errorf("other's k = %q, want the plan's 2", got)
	}
	// Planned again, the list merges by key: the controller's rule stays.
	events = w.execute(w.plan(decodeIn(t, w.ns, k.route("a2"))), apply.ExecuteOptions{})
	failOnFailures(t, events)
	k.assertRules(t, w.ns, map[string]any{"a": "a2", "b": "b1", "ctrl": "c1"})
}

// assertRules checks the route's rules, name → backend.
func (k keyedKind) assertRules(t *testing.T, ns string, want map[string]any) {
	t.Helper()
	live, err := dyn(t).Resource(k.gvr()).Namespace(ns).Get(context.Background(), "r", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rules, _, _ := unstructured.NestedSlice(live.Object, "spec", "rules")
	got := map[string]any{}
	for _, r := range rules {
		if r, ok := r.(map[string]any); ok {
			got[r["name"].(string)] = r["backend"]
		}
	}
	if toJSON(got) != toJSON(want) {
		t.Errorf("rules %s, want %s", toJSON(got), toJSON(want))
	}
}

// podDeployment is Deployment name whose container web has the fields
// container (YAML flow style, e.g. "args: [--a]").
func podDeployment(ns, name, container string) string {
	return `apiVersion: apps/v1
kind: Deployment
metadata: {name: ` + name + `, namespace: ` + ns + `}
spec:
  selector: {matchLabels: {app: ` + name + `}}
  template:
    metadata: {labels: {app: ` + name + `}}
    spec: {containers: [{name: web, image: registry.k8s.io/pause:3.10, ` + container + `}]}
`
}

// TestExecuteRefusesABuiltInValueReplacedWhole: a strategic merge patch
// sends an atomic list (a container's args) whole, deletes a keyed list
// the file dropped (env) whole, and sends a PodDisruptionBudget's selector
// (patch strategy replace) whole, each with what a controller added since
// the plan: each item is refused, naming the list or map, and the
// controller's addition stays.
func TestExecuteRefusesABuiltInValueReplacedWhole(t *testing.T) {
	w := newPlanWorld(t, "plan-builtin-whole")
	ctx := context.Background()
	pdb := func(labels string) *unstructured.Unstructured {
		return decodeIn(t, w.ns, pdbManifest(`{minAvailable: 1, selector: {matchLabels: `+labels+`}}`))
	}
	w.mustApply(decodeIn(t, w.ns, podDeployment(w.ns, "args", "args: [--a]")),
		decodeIn(t, w.ns, podDeployment(w.ns, "env", `env: [{name: A, value: "1"}]`)), pdb(`{app: web}`))
	p := w.plan(decodeIn(t, w.ns, podDeployment(w.ns, "args", "args: [--b]")),
		decodeIn(t, w.ns, podDeployment(w.ns, "env", "args: [--x]")), pdb(`{app: web, tier: fe}`))
	// A controller adds an argument, an environment variable, and a label
	// to the selector.
	for name, patch := range map[string]string{
		"args": `{"spec":{"template":{"spec":{"containers":[{"name":"web","args":["--a","--ctrl"]}]}}}}`,
		"env":  `{"spec":{"template":{"spec":{"containers":[{"name":"web","env":[{"name":"CTRL","value":"c"}]}]}}}}`,
	} {
		if _, err := dyn(t).Resource(deployments).Namespace(w.ns).Patch(ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: otherWriter}); err != nil {
			t.Fatal(err)
		}
	}
	w.mergePatch(pdbs, "web", `{"spec":{"selector":{"matchLabels":{"team":"t"}}}}`)
	p, _ = w.roundTrip(p)
	events := w.execute(p, apply.ExecuteOptions{})
	wantRefusedNaming(t, events[0], "spec.template.spec.containers[name=web].args")
	wantRefusedNaming(t, events[1], "spec.template.spec.containers[name=web].env")
	wantRefusedNaming(t, events[2], "spec.selector")
	// The server puts an element a strategic merge patch adds first.
	for name, want := range map[string][]string{"args": {`["--a","--ctrl"]`}, "env": {`[{"name":"A","value":"1"},{"name":"CTRL","value":"c"}]`, `[{"name":"CTRL","value":"c"},{"name":"A","value":"1"}]`}} {
		containers, _, _ := unstructured.NestedSlice(w.read(deployments, name).Object, "spec", "template", "spec", "containers")
		if got := toJSON(containers[0].(map[string]any)[name]); !slices.Contains(want, got) {
			t.Errorf("deployment %s: %s %s, want the controller's kept: %s", name, name, got, want[0])
		}
	}
	labels, _, _ := unstructured.NestedMap(w.read(pdbs, "web").Object, "spec", "selector", "matchLabels")
	if got := toJSON(labels); got != `{"app":"web","team":"t"}` {
		t.Errorf("the selector's labels %s, want the other writer's kept", got)
	}
}
