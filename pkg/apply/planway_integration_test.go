package apply_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/load"
	"github.com/kapply/kapply/pkg/plan"
)

// kapplyPlanTool applies a scenario's files as `kapply plan -o P` and
// `kapply apply --plan P -f files` do: Applier.Plan, the plan encoded
// and decoded, then Applier.Execute with the files' objects.
const kapplyPlanTool tool = 100

// kapplyPlanned plans path in the world, saves and reads the plan back,
// and executes it, failing the test on any failure.
func kapplyPlanned(t *testing.T, w *world, path string) []apply.Event {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(true)
	flags.KubeConfig = &cluster.Kubeconfig
	flags.CacheDir = &w.cacheDir
	applier := newApplierFrom(t, flags, w)
	ctx := context.Background()
	p, err := applier.Plan(ctx, loadInput(flags, load.Files{Filenames: []string{path}}, ""), apply.PlanOptions{Write: apply.WriteOptions{Namespace: w.ns}})
	if err != nil {
		t.Fatalf("kapply plan: %v", err)
	}
	var saved bytes.Buffer
	if err := plan.Encode(&saved, p); err != nil {
		t.Fatalf("encoding the plan: %v", err)
	}
	decoded, err := plan.Decode(&saved)
	if err != nil {
		t.Fatalf("decoding the plan: %v", err)
	}
	events, err := applier.Execute(ctx, decoded, apply.ExecuteOptions{Objects: loadInput(flags, load.Files{Filenames: []string{path}}, "")})
	if err != nil {
		t.Fatalf("kapply apply --plan: %v", err)
	}
	failOnFailures(t, events)
	return events
}

// newApplierFrom is the Applier runFiles builds, with the world's merge keys.
func newApplierFrom(t *testing.T, getter genericclioptions.RESTClientGetter, w *world) *apply.Applier {
	t.Helper()
	cfg, err := getter.ToRESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	mapper, err := getter.ToRESTMapper()
	if err != nil {
		t.Fatal(err)
	}
	dc, err := getter.ToDiscoveryClient()
	if err != nil {
		t.Fatal(err)
	}
	clients, err := apply.NewClients(cfg, mapper, dc, w.mergeKeys)
	if err != nil {
		t.Fatal(err)
	}
	return apply.NewApplier(clients)
}

// outcomesOf is each object's outcome by name, whatever the order of the
// events (Apply's are in input order, Execute's in the plan's).
func outcomesOf(events []apply.Event) map[string]apply.Outcome {
	out := map[string]apply.Outcome{}
	for _, ev := range events {
		out[apply.ObjectName(ev.Object)] = ev.Outcome
	}
	return out
}

// assertSameBothWays runs the scenario's steps once more, each apply as a
// saved plan executed, and wants the same outcomes at every step and the
// same final objects as plain apply gave (ours).
func assertSameBothWays(t *testing.T, sc scenario, ours *world, live map[objRef]*unstructured.Unstructured) {
	t.Helper()
	planned := newWorld(t, kapplyPlanTool, sc.mergeKeys)
	runSteps(t, planned, sc.steps)
	if !reflect.DeepEqual(ours.outcomes, planned.outcomes) {
		t.Errorf("outcomes differ: apply %v, plan + apply --plan %v", ours.outcomes, planned.outcomes)
	}
	theirs := liveObjects(t, planned, sc.objects)
	for ref, o := range live {
		a, b := normalize(t, o), normalize(t, theirs[ref])
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s differs between apply and plan + apply --plan (- apply, + plan):\n%s", ref, lineDiff(toYAML(t, a), toYAML(t, b)))
		}
	}
}

// TestConflictPlainReplansSavedRefuses: another writer changes a field
// the plan writes (a custom resource's list, sent whole under the
// resourceVersion) between kapply's read and its patch, on the real
// server. Plain Apply, whose conflict policy is to plan again, reads the
// object again and succeeds, keeping the writer's element; the same
// change made to an object under a saved plan, between Execute's check
// and its write, gets the item refused as changed since the plan, and
// nothing of the plan is written.
func TestConflictPlainReplansSavedRefuses(t *testing.T) {
	requireCluster(t)
	applyListCRDs(t)
	const before = `
apiVersion: lists.kapply.test/v1
kind: Gadget
metadata: {name: g}
spec:
  byName: [{name: a, value: "1"}, {name: b, value: "2"}]
`
	const after = `
apiVersion: lists.kapply.test/v1
kind: Gadget
metadata: {name: g}
spec:
  byName: [{name: a, value: "10"}]
`
	lateWriter := func(w *world) *patchRecorder {
		return &patchRecorder{
			match: func(r *http.Request) bool {
				return r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, "/gadgets/g")
			},
			beforeFirst: func() error {
				return jsonPatch(w, theGadget, `[{"op":"add","path":"/spec/byName/-","value":{"name":"late","value":"l"}}]`)
			},
		}
	}
	wantCalls := func(t *testing.T, rec *patchRecorder, want ...int) {
		t.Helper()
		if err := rec.hookErr; err != nil {
			t.Fatalf("the concurrent write failed: %v", err)
		}
		var got []int
		for _, c := range rec.recorded() {
			got = append(got, c.status)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("patch statuses %v, want %v", got, want)
		}
	}

	t.Run("plain apply plans again", func(t *testing.T) {
		w := newWorld(t, kapplyTool, nil)
		applyFile(before).run(t, w)
		rec := lateWriter(w)
		failOnFailures(t, kapplyRunWith(t, w, writeManifest(t, w, after), rec.wrap))
		wantCalls(t, rec, http.StatusConflict, http.StatusOK)
		g := get(t, w, theGadget)
		wantSet(t, keysOf(t, g, "name", "spec", "byName"), "a", "late")
		wantField(t, g, "10", "spec", "byName", "[name=a]", "value")
	})

	t.Run("a saved plan refuses", func(t *testing.T) {
		w := newWorld(t, kapplyTool, nil)
		applyFile(before).run(t, w)
		path := writeManifest(t, w, after)
		rec := lateWriter(w)
		flags := genericclioptions.NewConfigFlags(true)
		flags.KubeConfig = &cluster.Kubeconfig
		flags.CacheDir = &w.cacheDir
		flags.WrapConfigFn = rec.wrap
		applier := newApplierFrom(t, flags, w)
		ctx := context.Background()
		p, err := applier.Plan(ctx, loadInput(flags, load.Files{Filenames: []string{path}}, ""), apply.PlanOptions{Write: apply.WriteOptions{Namespace: w.ns}})
		if err != nil {
			t.Fatalf("plan: %v", err)
		}
		var saved bytes.Buffer
		if err := plan.Encode(&saved, p); err != nil {
			t.Fatal(err)
		}
		decoded, err := plan.Decode(&saved)
		if err != nil {
			t.Fatal(err)
		}
		events, err := applier.Execute(ctx, decoded, apply.ExecuteOptions{Objects: loadInput(flags, load.Files{Filenames: []string{path}}, "")})
		if err != nil {
			t.Fatalf("execute: %v", err)
		}
		wantCalls(t, rec, http.StatusConflict)
		var changed *plan.ChangedError
		if len(events) != 1 || events[0].Outcome != apply.Failed || !errors.As(events[0].Err, &changed) {
			t.Fatalf("events %v: want the item refused as changed since the plan", events)
		}
		g := get(t, w, theGadget)
		wantSet(t, keysOf(t, g, "name", "spec", "byName"), "a", "b", "late")
		wantField(t, g, "1", "spec", "byName", "[name=a]", "value")
	})
}
