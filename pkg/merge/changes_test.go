package merge

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func formatChanges(cs []Change) string {
	lines := make([]string, len(cs))
	for i, c := range cs {
		lines[i] = fmt.Sprintf("%s: %v -> %v (%s)", c.Path, c.Old, c.New, c.Reason)
	}
	return strings.Join(lines, "\n")
}

func TestExplain(t *testing.T) {
	dep := builtins(t)["Deployment"]
	l := decodeYAML(t, `metadata: {labels: {app: a, old: x}}
spec: {template: {spec: {containers: [{name: web, image: a, args: [x]}, {name: gone, image: g}]}}}`)
	f := decodeYAML(t, `metadata: {labels: {app: b}}
spec: {strategy: {type: Recreate}, template: {spec: {containers: [{name: web, image: b}]}}}`)
	c := decodeYAML(t, `metadata: {labels: {app: a, old: x, team: t}}
spec: {strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1}}, template: {spec: {containers: [{name: web, image: a, args: [x], imagePullPolicy: Always}, {name: gone, image: g}, {name: sidecar, image: s}]}}}`)
	plan := checkAgainstOracle(t, dep, l, f, c)
	want := []string{
		"metadata.labels.app: a -> b (set by file)",
		"metadata.labels.old: x -> <nil> (removed from file)",
		"metadata.labels.team: t -> t (kept: not managed by the file)",
		"spec.strategy.rollingUpdate.maxSurge: 1 -> <nil> (cleared: the file sets its parent object)",
		"spec.strategy.type: RollingUpdate -> Recreate (set by file)",
		"spec.template.spec.containers[name=web].args: [x] -> <nil> (removed from file)",
		"spec.template.spec.containers[name=web].image: a -> b (set by file)",
		"spec.template.spec.containers[name=web].imagePullPolicy: Always -> Always (kept: not managed by the file)",
		"spec.template.spec.containers[name=sidecar]: map[image:s name:sidecar] -> map[image:s name:sidecar] (kept: not managed by the file)",
		"spec.template.spec.containers[name=gone].image: g -> <nil> (removed from file)",
		"spec.template.spec.containers[name=gone].name: gone -> <nil> (removed from file)",
	}
	if got := formatChanges(plan.Changes); got != strings.Join(want, "\n") {
		t.Errorf("changes:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	if plan.Empty() {
		t.Error("Empty() = true for a plan with changes")
	}
}

func TestEmptyPlan(t *testing.T) {
	dep := builtins(t)["Deployment"]
	l := decodeYAML(t, `spec: {replicas: 2, template: {spec: {containers: [{name: web, image: a}]}}}`)
	c := decodeYAML(t, `spec: {replicas: 2, paused: false, template: {spec: {containers: [{name: web, image: a, imagePullPolicy: Always}]}}}`)
	plan := checkAgainstOracle(t, dep, l, l, c)
	if !plan.Empty() {
		t.Errorf("Empty() = false; patch %s", plan.Patch.Data)
	}
	for _, ch := range plan.Changes {
		if ch.Reason != KeptUnmanaged {
			t.Errorf("unexpected change %s (%s)", ch.Path, ch.Reason)
		}
	}
}

// TestChangesAgreeWithPatch checks, over generated triples, that a plan is
// empty exactly when it reports no change other than kept fields.
func TestChangesAgreeWithPatch(t *testing.T) {
	kinds := allKinds(t).all
	reach := map[*builtin]*reachIndex{}
	for i := range 3000 {
		b := kinds[i%len(kinds)]
		if reach[b] == nil {
			reach[b] = newReachIndex(b.kind.Strategic)
		}
		l, f, c := genTriple(uint64(i), b, reach[b])
		plan, err := ThreeWay(l, f, c, b.kind)
		if err != nil {
			t.Fatalf("seed %d: %v", i, err)
		}
		changed := slices.ContainsFunc(plan.Changes, func(c Change) bool { return c.Reason != KeptUnmanaged })
		if changed == plan.Empty() {
			t.Fatalf("seed %d %s: Empty() = %v but changes:\n%s\npatch %s", i, b.name, plan.Empty(), formatChanges(plan.Changes), plan.Patch.Data)
		}
	}
}

// TestExplainReplacedMap: under patch strategy replace the file's map
// replaces live's, so a live-only key is cleared with its parent, not kept.
func TestExplainReplacedMap(t *testing.T) {
	pdb := builtins(t)["PodDisruptionBudget"]
	l := decodeYAML(t, `spec: {minAvailable: 2, selector: {matchLabels: {app: web}}}`)
	f := decodeYAML(t, `spec: {maxUnavailable: 25%, selector: {matchLabels: {app: web, tier: fe}}}`)
	c := decodeYAML(t, `spec: {minAvailable: 2, selector: {matchLabels: {app: web, team: t}}}`)
	plan := checkAgainstOracle(t, pdb, l, f, c)
	want := []string{
		"spec.maxUnavailable: <nil> -> 25% (set by file)",
		"spec.minAvailable: 2 -> <nil> (removed from file)",
		"spec.selector.matchLabels.team: t -> <nil> (cleared: the file sets its parent object)",
		"spec.selector.matchLabels.tier: <nil> -> fe (set by file)",
	}
	if got := formatChanges(plan.Changes); got != strings.Join(want, "\n") {
		t.Errorf("changes:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}
