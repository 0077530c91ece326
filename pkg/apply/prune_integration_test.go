package apply_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/apply/prune"
	kcluster "github.com/kapply/kapply/pkg/cluster"
	"github.com/kapply/kapply/pkg/lastapplied"
)

// pruneWorld is a namespace where a program writes its ConfigMaps itself
// (no apply) and prunes with an Applier.
type pruneWorld struct {
	t       *testing.T
	ns      string
	applier *apply.Applier
}

func newPruneWorld(t *testing.T) *pruneWorld {
	t.Helper()
	requireCluster(t)
	applier, err := newExampleApplier(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	return &pruneWorld{t: t, ns: cluster.Namespace(t), applier: applier}
}

// write is the program's own create of a ConfigMap with labels and
// annotations; it returns the object as the server does (with its UID).
func (w *pruneWorld) write(name string, labels, annotations map[string]string) *unstructured.Unstructured {
	w.t.Helper()
	cm := configMap(name, map[string]any{"k": name})
	cm.SetLabels(labels)
	cm.SetAnnotations(annotations)
	made, err := dyn(w.t).Resource(configMaps).Namespace(w.ns).Create(context.Background(), cm, metav1.CreateOptions{FieldManager: "program"})
	if err != nil {
		w.t.Fatal(err)
	}
	return made
}

func (w *pruneWorld) prune(in []*unstructured.Unstructured, opts apply.PruneOptions) []apply.Event {
	w.t.Helper()
	opts.Namespace = w.ns
	events, err := w.applier.Prune(context.Background(), apply.Input{Objects: in}, opts)
	if err != nil {
		w.t.Fatal(err)
	}
	return events
}

// live names the ConfigMaps of the namespace, sorted.
func (w *pruneWorld) live() []string {
	w.t.Helper()
	list, err := dyn(w.t).Resource(configMaps).Namespace(w.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	var names []string
	for _, cm := range list.Items {
		if cm.GetName() != "kube-root-ca.crt" {
			names = append(names, cm.GetName())
		}
	}
	slices.Sort(names)
	return names
}

// pruned names the objects events say were pruned, sorted; any other
// outcome fails the test.
func pruned(t *testing.T, events []apply.Event) []string {
	t.Helper()
	var names []string
	for _, ev := range events {
		if ev.Outcome != apply.Pruned {
			t.Fatalf("%s: %v %v, want pruned", apply.ObjectRef(ev.Object), ev.Outcome, ev.Err)
		}
		names = append(names, ev.Object.GetName())
	}
	slices.Sort(names)
	return names
}

func wantNames(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s: %v, want %v", what, got, want)
	}
}

// TestPruneApplySetAlone: a program writes the members of an ApplySet
// itself, labelled with the set's ID, and prunes with Applier.Prune: the
// first prune creates the parent recording the members' kind and
// namespace, dry runs (client and server) name what would go and delete
// nothing, and the real prune deletes the members the input dropped and
// leaves alone an object outside the set.
func TestPruneApplySetAlone(t *testing.T) {
	w := newPruneWorld(t)
	member := map[string]string{prune.PartOfLabel: prune.SetID(k8sschema.GroupKind{Kind: "Secret"}, "app", w.ns)}
	a, b, c := w.write("a", member, nil), w.write("b", member, nil), w.write("c", member, nil)
	w.write("outsider", nil, nil)
	opts := apply.PruneOptions{Options: prune.Options{ApplySet: "app"}}

	wantNames(t, "first prune", pruned(t, w.prune([]*unstructured.Unstructured{a, b, c}, opts)))
	parent, err := dyn(t).Resource(secrets).Namespace(w.ns).Get(context.Background(), "app", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the parent: %v", err)
	}
	if kinds := parent.GetAnnotations()["applyset.kubernetes.io/contains-group-kinds"]; kinds != "ConfigMap" {
		t.Errorf("the parent records kinds %q, want ConfigMap", kinds)
	}
	for _, dryRun := range []kcluster.DryRun{kcluster.ClientDryRun, kcluster.ServerDryRun} {
		opts.DryRun = dryRun
		wantNames(t, "dry run", pruned(t, w.prune([]*unstructured.Unstructured{a}, opts)), "b", "c")
		wantNames(t, "live after a dry run", w.live(), "a", "b", "c", "outsider")
	}
	opts.DryRun = kcluster.NoDryRun
	wantNames(t, "prune", pruned(t, w.prune([]*unstructured.Unstructured{a}, opts)), "b", "c")
	wantNames(t, "live after the prune", w.live(), "a", "outsider")
}

// TestPruneBySelectorAlone: kubectl's older prune without apply: the
// program's objects matching the selector that carry a last-applied record
// and the input no longer declares are deleted; one without a record, one
// outside the selector and the declared one stay. A server dry run
// deletes nothing.
func TestPruneBySelectorAlone(t *testing.T) {
	w := newPruneWorld(t)
	group := map[string]string{"app": "shop"}
	record := map[string]string{lastapplied.Annotation: `{"apiVersion":"v1","kind":"ConfigMap"}`}
	keep := w.write("keep", group, record)
	w.write("dropped", group, record)
	w.write("no-record", group, nil)
	w.write("other-app", map[string]string{"app": "blog"}, record)
	opts := apply.PruneOptions{Options: prune.Options{Selector: "app=shop", Allowlist: []string{"core/v1/ConfigMap"}}, DryRun: kcluster.ServerDryRun}

	wantNames(t, "server dry run", pruned(t, w.prune([]*unstructured.Unstructured{keep}, opts)), "dropped")
	wantNames(t, "live after the dry run", w.live(), "dropped", "keep", "no-record", "other-app")
	opts.DryRun = kcluster.NoDryRun
	wantNames(t, "prune", pruned(t, w.prune([]*unstructured.Unstructured{keep}, opts)), "dropped")
	wantNames(t, "live after the prune", w.live(), "keep", "no-record", "other-app")
}

// TestPruneRefusals: Prune deletes nothing, and says why with a
// *PruneError, when the input had a load error, holds an object that
// cannot be mapped (its live copy could look undeclared), or is empty
// without AllowEmpty; an ApplySet parent of another tool is not touched.
func TestPruneRefusals(t *testing.T) {
	w := newPruneWorld(t)
	member := map[string]string{prune.PartOfLabel: prune.SetID(k8sschema.GroupKind{Kind: "Secret"}, "app", w.ns)}
	a := w.write("a", member, nil)
	w.write("b", member, nil)
	opts := apply.PruneOptions{Options: prune.Options{ApplySet: "app"}, Namespace: w.ns}
	unknown := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "nowhere.kapply.test/v1", "kind": "Nothing",
		"metadata": map[string]any{"name": "x"}}}
	for name, tc := range map[string]struct {
		in   apply.Input
		want []string
	}{
		"load error": {apply.Input{Objects: []*unstructured.Unstructured{a}, Errors: []error{errors.New("reading b.yaml: bad")}}, []string{"could not be loaded"}},
		// The refusal names the object that could not be mapped.
		"unmapped": {apply.Input{Objects: []*unstructured.Unstructured{a, unknown}}, []string{"could not be mapped", "Nothing"}},
		"empty":    {apply.Input{}, []string{"prune.Options.AllowEmpty"}},
	} {
		events, err := w.applier.Prune(context.Background(), tc.in, opts)
		var refused *apply.PruneError
		if !errors.As(err, &refused) || events != nil {
			t.Errorf("%s: events %v, error %v; want refused", name, events, err)
			continue
		}
		for _, want := range tc.want {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v, want it to say %q", name, err, want)
			}
		}
	}
	wantNames(t, "live after the refusals", w.live(), "a", "b")
	if _, err := dyn(t).Resource(secrets).Namespace(w.ns).Get(context.Background(), "app", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a refused prune wrote the parent: %v", err)
	}

	foreign := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{
		"name": "app", "annotations": map[string]any{"applyset.kubernetes.io/tooling": "helm/v3"}}}}
	if _, err := dyn(t).Resource(secrets).Namespace(w.ns).Create(context.Background(), foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.applier.Prune(context.Background(), apply.Input{Objects: []*unstructured.Unstructured{a}}, opts); err == nil || !strings.Contains(err.Error(), "helm") {
		t.Errorf("a parent of another tool: %v, want refused", err)
	}
	wantNames(t, "live after the foreign parent", w.live(), "a", "b")
}
