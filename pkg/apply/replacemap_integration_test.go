package apply_test

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/diff"
)

var (
	pdbs   = k8sschema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}
	webPDB = objRef{pdbs, "web"}
)

// pdbManifest is a PodDisruptionBudget whose spec.selector carries
// x-kubernetes-patch-strategy: replace: the server replaces the selector
// whole with the patch's, so the patch must carry all of it.
func pdbManifest(spec string) string {
	return `
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec: ` + spec + "\n"
}

// TestReplaceMapStrategy: a map with patch strategy replace is sent whole,
// so a selector that gains a label keeps the ones it had (kapply used to
// send only the new label, which the server made the whole selector), and
// another writer's label is dropped exactly as kubectl drops it.
func TestReplaceMapStrategy(t *testing.T) {
	runScenarios(t, []scenario{{
		name:    "selector gains a label and keeps the old one",
		objects: []objRef{webPDB},
		steps: []step{
			applyFile(pdbManifest(`{minAvailable: 2, selector: {matchLabels: {app: web}}}`)),
			applyFile(pdbManifest(`{maxUnavailable: "25%", selector: {matchLabels: {app: web, tier: fe}}}`)),
		},
		check: func(t *testing.T, live map[objRef]*unstructured.Unstructured) {
			pdb := live[webPDB]
			wantField(t, pdb, map[string]any{"app": "web", "tier": "fe"}, "spec", "selector", "matchLabels")
			wantField(t, pdb, "25%", "spec", "maxUnavailable")
			wantField(t, pdb, nil, "spec", "minAvailable")
		},
	}, {
		name:    "another writer's selector label is replaced with the file's selector",
		objects: []objRef{webPDB},
		steps: []step{
			applyFile(pdbManifest(`{minAvailable: 1, selector: {matchLabels: {app: web}}}`)),
			patchBy(webPDB, types.MergePatchType, `{"spec":{"selector":{"matchLabels":{"team":"t"}}}}`),
			applyFile(pdbManifest(`{minAvailable: 1, selector: {matchLabels: {app: web, tier: fe}}}`)),
		},
		check: func(t *testing.T, live map[objRef]*unstructured.Unstructured) {
			wantField(t, live[webPDB], map[string]any{"app": "web", "tier": "fe"}, "spec", "selector", "matchLabels")
		},
	}, {
		name:    "selector switched from labels to expressions",
		objects: []objRef{webPDB},
		steps: []step{
			applyFile(pdbManifest(`{minAvailable: 1, selector: {matchLabels: {app: web}}}`)),
			applyFile(pdbManifest(`{minAvailable: 1, selector: {matchExpressions: [{key: app, operator: In, values: [web, api]}]}}`)),
		},
		check: func(t *testing.T, live map[objRef]*unstructured.Unstructured) {
			pdb := live[webPDB]
			wantField(t, pdb, nil, "spec", "selector", "matchLabels")
			wantField(t, pdb, []any{map[string]any{"key": "app", "operator": "In", "values": []any{"web", "api"}}}, "spec", "selector", "matchExpressions")
		},
	}})
}

// TestReplaceMapDiffExplain: `kapply diff --explain` (a server dry run of the
// plan's patch, rendered with the plan's reasons) shows the selector keeping
// its old label and explains the new one.
func TestReplaceMapDiffExplain(t *testing.T) {
	requireCluster(t)
	w := newWorld(t, kapplyTool, nil)
	runSteps(t, w, []step{applyFile(pdbManifest(`{minAvailable: 2, selector: {matchLabels: {app: web}}}`))})
	path := writeManifest(t, w, pdbManifest(`{maxUnavailable: "25%", selector: {matchLabels: {app: web, tier: fe}}}`))
	ev := serverDryRun(t, w, path)[0]
	wantField(t, ev.Result, map[string]any{"app": "web", "tier": "fe"}, "spec", "selector", "matchLabels")
	obj, err := diff.FromItem(*ev.Item, ev.Live.Object)
	if err != nil {
		t.Fatalf("showing the item: %v", err)
	}
	obj.Ref, obj.After, obj.Owners = apply.ObjectRef(ev.Object), ev.Result.Object, nil
	c, err := diff.Compare(obj, diff.Options{Explain: true})
	if err != nil {
		t.Fatalf("comparing: %v", err)
	}
	var out bytes.Buffer
	if err := (diff.Printer{Options: diff.Options{Explain: true}}).Print(&out, []diff.Comparison{c}); err != nil {
		t.Fatalf("printing: %v", err)
	}
	for _, line := range []string{
		`spec.selector.matchLabels.tier: (none) -> "fe"  (set by file)`,
		`spec.minAvailable: 2 -> (none)  (removed from file)`,
		`spec.maxUnavailable: (none) -> "25%"  (set by file)`,
	} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("diff --explain lacks %q:\n%s", line, out.String())
		}
	}
	if strings.Contains(out.String(), "-      app: web") {
		t.Errorf("diff shows the selector losing app: web:\n%s", out.String())
	}
}
