package realworld_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"

	"github.com/kapply/kapply/pkg/apply"
	kdelete "github.com/kapply/kapply/pkg/delete"
	"github.com/kapply/kapply/pkg/plan"
)

// TestLocalServerSide compares server-side apply computed locally
// (PlanOptions.LocalServerSide, what `diff --local --server-side` shows)
// with the server's dry run of the same apply (dryRun=All), for every
// object of every project, in four states: create; re-apply unchanged; a
// field removed from the file; a list element removed from the file.
// managedFields, status and the metadata the server stamps are left out;
// on create, fields only the server's result has are its defaults and do
// not count. Every other difference is logged by kind and field (see
// docs/local-server-side.md); the test fails on any difference outside the
// known ones (knownLocalDifferences).
func TestLocalServerSide(t *testing.T) {
	if cluster == nil {
		t.Skip("no local cluster (run `make k8s-bin`)")
	}
	applier := newLocalSSAApplier(t)
	var all tally
	run := func(t *testing.T, p *project) {
		r := &runner{t: t, project: p}
		defer func(start time.Time) {
			// Deleted in the background first, as kapply delete does: a
			// Job deleted with the server's default (orphan) would wait
			// for a garbage collector this cluster does not run.
			_, _ = applier.Delete(context.Background(), apply.Input{Objects: copies(p.objects)},
				kdelete.Options{Namespace: p.namespace, Cascade: metav1.DeletePropagationBackground, IgnoreNotFound: true})
			r.cleanUp()
			t.Logf("clean-up in %v", time.Since(start).Round(time.Millisecond))
		}(time.Now())
		r.createNamespace()
		c := comparison{t: t, applier: applier, project: p, tally: &all}
		c.create()
		c.applyAll()
		c.state("unchanged", func(obj *unstructured.Unstructured) bool { return true })
		c.state("field removed", removeField)
		c.state("list element removed", removeListElement)
	}
	projects := loadProjects(t)
	// The projects share nothing but the cluster: they run at once (their
	// CRDs' deletion, the slowest step, overlaps), except the last,
	// Gatekeeper, whose webhook would refuse the others' namespaces.
	last := projects[len(projects)-1]
	t.Run("parallel", func(t *testing.T) {
		for _, p := range projects[:len(projects)-1] {
			t.Run(p.name, func(t *testing.T) {
				t.Parallel()
				run(t, p)
			})
		}
	})
	t.Run(last.name, func(t *testing.T) { run(t, last) })
	t.Logf("local server-side apply: %d objects, %d match the server's dry run in every state compared; %d comparisons, %d differences; %d left out",
		len(all.objects), len(all.objects)-len(all.differing), all.compared, all.differences, len(all.skipped))
	t.Logf("comparisons by state: %v", all.byState)
	for _, s := range all.skipped {
		t.Log("not compared: " + s)
	}
	for _, d := range all.log {
		t.Log(d)
	}
}

type tally struct {
	mu          sync.Mutex
	objects     map[string]bool
	differing   map[string]bool
	compared    int
	differences int
	log         []string
	skipped     []string
	byState     map[string]int
}

func (t *tally) skip(why string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.skipped = append(t.skipped, why)
}

func (t *tally) object(id, state string, differs bool, lines []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.compared++
	if t.byState == nil {
		t.byState = map[string]int{}
	}
	t.byState[state]++
	t.differences += len(lines)
	t.log = append(t.log, lines...)
	if t.objects == nil {
		t.objects, t.differing = map[string]bool{}, map[string]bool{}
	}
	t.objects[id] = true
	if differs {
		t.differing[id] = true
	}
}

func newLocalSSAApplier(t *testing.T) *apply.Applier {
	dc, err := discovery.NewDiscoveryClientForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	cached := memory.NewMemCacheClient(dc)
	clients, err := apply.NewClients(cluster.Config, restmapper.NewDeferredDiscoveryRESTMapper(cached), cached, nil)
	if err != nil {
		t.Fatal(err)
	}
	return apply.NewApplier(clients)
}

// comparison runs the states of one project.
type comparison struct {
	t       *testing.T
	applier *apply.Applier
	project *project
	tally   *tally
	// created marks the objects whose create was compared; why says,
	// of the others, why each pass left it out.
	created map[string]bool
	why     map[string]string
}

// create compares the creates the server can dry-run now, then creates
// the Namespaces and CRDs and compares the creates of the others.
func (c *comparison) create() {
	c.created = map[string]bool{}
	c.compare("create", c.project.objects)
	var first, rest []*unstructured.Unstructured
	for _, obj := range c.project.objects {
		switch {
		case obj.GetKind() == "Namespace" || obj.GetKind() == "CustomResourceDefinition":
			first = append(first, obj)
		case !c.created[obj.GetKind()+"/"+obj.GetName()]:
			rest = append(rest, obj)
		}
	}
	c.apply(first)
	c.compare("create", rest)
	seen := map[string]bool{}
	for _, obj := range c.project.objects {
		key := obj.GetKind() + "/" + obj.GetName()
		switch {
		case seen[key]:
			c.tally.skip(fmt.Sprintf("%s %s (namespace %q): another object of the same kind and name", c.project.name, key, obj.GetNamespace()))
		case !c.created[key]:
			why := c.why[key]
			if why == "" {
				why = "no item in either pass"
			}
			c.t.Errorf("create not compared: %s %s: %s", c.project.name, key, why)
		}
		seen[key] = true
	}
}

func (c *comparison) applyAll() { c.apply(c.project.objects) }

func (c *comparison) apply(objects []*unstructured.Unstructured) {
	if len(objects) == 0 {
		return
	}
	defer func(start time.Time) {
		c.t.Logf("apply: %d objects in %v", len(objects), time.Since(start).Round(time.Millisecond))
	}(time.Now())
	// One project writes at a time, and a write the loaded server timed
	// out (a large CRD) is tried again: the applies only set the stage.
	applying.Lock()
	defer applying.Unlock()
	var failed error
	for attempt := 0; attempt < 3; attempt++ {
		events, err := c.applier.Apply(context.Background(), apply.Input{Objects: copies(objects)},
			apply.Options{Write: apply.WriteOptions{ServerSide: true, Namespace: c.project.namespace, ForceConflicts: true}})
		if err != nil {
			c.t.Fatalf("applying: %v", err)
		}
		failed = nil
		for _, ev := range events {
			if ev.Outcome == apply.Failed {
				failed = fmt.Errorf("applying %s: %w", apply.ObjectRef(ev.Object), ev.Err)
				c.t.Logf("attempt %d: %v", attempt+1, failed)
			}
		}
		if failed == nil {
			return
		}
	}
	c.t.Fatal(failed)
}

// applying lets one project apply at a time.
var applying sync.Mutex

// state compares the objects that change (edited in place on a copy,
// reporting whether it applies to the object) against the live objects.
func (c *comparison) state(name string, change func(*unstructured.Unstructured) bool) {
	var objects []*unstructured.Unstructured
	for _, obj := range copies(c.project.objects) {
		if change(obj) {
			objects = append(objects, obj)
		}
	}
	c.compare(name, objects)
}

// compare plans objects twice, locally and by the server's dry run, and
// compares the results of the objects both planned.
func (c *comparison) compare(state string, objects []*unstructured.Unstructured) {
	if len(objects) == 0 {
		return
	}
	defer func(start time.Time) {
		c.t.Logf("%s: %d objects in %v", state, len(objects), time.Since(start).Round(time.Millisecond))
	}(time.Now())
	if state != "create" {
		c.why = nil // create's two passes share theirs
	}
	compared := map[string]bool{}
	defer func() {
		if state == "create" {
			return // create() names the objects neither pass compared
		}
		for _, obj := range objects {
			key := obj.GetKind() + "/" + obj.GetName()
			if compared[key] {
				continue
			}
			c.tally.skip(fmt.Sprintf("%s %s (%s): %s", c.project.name, key, state, c.why[key]))
			left := c.project.name + " " + key + " (" + state + ")"
			if !slices.Contains(invalidEdits, left) || !strings.Contains(c.why[key], " is invalid: ") {
				c.t.Errorf("not compared: %s: %s", left, c.why[key])
			}
		}
	}()
	local := c.plan(objects, apply.PlanOptions{LocalServerSide: true}, "local")
	server := c.plan(objects, apply.PlanOptions{ServerDryRun: true}, "server")
	for key, s := range server {
		l, ok := local[key]
		if !ok || s.DryRunResult == nil {
			c.because(s.ID.Kind+"/"+s.ID.Name, fmt.Sprintf("no server dry run (local planned: %t; warnings: %q)", ok, s.Warnings))
			continue
		}
		compared[s.ID.Kind+"/"+s.ID.Name] = true
		if state == "create" {
			c.created[s.ID.Kind+"/"+s.ID.Name] = true
		}
		diffs := differences(stripped(l.Merged), stripped(s.DryRunResult), "", state == "create")
		var lines []string
		for _, d := range diffs {
			line := fmt.Sprintf("%s %s (%s): %s", c.project.name, key, state, d)
			lines = append(lines, line)
			if !knownLocalDifference(s.ID.Kind, d) {
				c.t.Errorf("unexpected difference: %s", line)
			}
		}
		c.tally.object(c.project.name+"/"+key, state, len(diffs) > 0, lines)
	}
}

func (c *comparison) plan(objects []*unstructured.Unstructured, opts apply.PlanOptions, pass string) map[string]plan.Item {
	opts.Write.ServerSide, opts.Write.Namespace = true, c.project.namespace
	p, err := c.applier.Plan(context.Background(), apply.Input{Objects: copies(objects)}, opts)
	var planErr *apply.PlanError
	if err != nil && !errors.As(err, &planErr) {
		c.t.Fatalf("planning: %v", err)
	}
	if planErr != nil {
		for _, e := range planErr.Errs {
			if f, ok := errors.AsType[*apply.PlanFailure](e); ok {
				obj := objects[f.Index]
				c.because(obj.GetKind()+"/"+obj.GetName(), pass+" plan failed: "+f.Error())
			}
		}
	}
	items := map[string]plan.Item{}
	for _, it := range p.Items {
		items[it.ID.Kind+"/"+it.ID.Namespace+"/"+it.ID.Name] = it
	}
	return items
}

// because notes why an object's create was not compared (the last
// pass's word wins: the second pass is the one that counts).
func (c *comparison) because(key, why string) {
	if c.why == nil {
		c.why = map[string]string{}
	}
	c.why[key] = why
}

func copies(objects []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(objects))
	for i, obj := range objects {
		out[i] = obj.DeepCopy()
	}
	return out
}

// stripped is the object without what no apply sets: managedFields,
// status, and the metadata the server stamps on every write.
func stripped(obj map[string]any) map[string]any {
	out := (&unstructured.Unstructured{Object: obj}).DeepCopy().Object
	delete(out, "status")
	if metadata, ok := out["metadata"].(map[string]any); ok {
		for _, f := range []string{"managedFields", "resourceVersion", "uid", "creationTimestamp", "generation"} {
			delete(metadata, f)
		}
	}
	return out
}

// differences lists where local and server differ, as "path: what"; with
// onlyLocal, fields only the server has (its defaults) are not listed.
func differences(local, server any, path string, onlyLocal bool) []string {
	lm, lok := local.(map[string]any)
	sm, sok := server.(map[string]any)
	if lok && sok {
		keys := map[string]bool{}
		for k := range lm {
			keys[k] = true
		}
		for k := range sm {
			keys[k] = true
		}
		var out []string
		for _, k := range sortedKeys(keys) {
			lv, inLocal := lm[k]
			sv, inServer := sm[k]
			switch {
			case !inLocal && onlyLocal:
			case !inLocal:
				out = append(out, path+"."+k+": only in the server's result")
			case !inServer:
				out = append(out, path+"."+k+": only in the local result")
			default:
				out = append(out, differences(lv, sv, path+"."+k, onlyLocal)...)
			}
		}
		return out
	}
	ll, lok := local.([]any)
	sl, sok := server.([]any)
	if lok && sok && len(ll) == len(sl) {
		var out []string
		for i := range ll {
			out = append(out, differences(ll[i], sl[i], fmt.Sprintf("%s[%d]", path, i), onlyLocal)...)
		}
		return out
	}
	if reflect.DeepEqual(local, server) || fmt.Sprint(local) == fmt.Sprint(server) {
		return nil
	}
	return []string{fmt.Sprintf("%s: local %s, server %s", path, short(local), short(server))}
}

func short(v any) string {
	s := fmt.Sprint(v)
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return s
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// removeField drops a field of the file: its last label, else its last
// annotation.
func removeField(obj *unstructured.Unstructured) bool {
	for _, field := range []string{"labels", "annotations"} {
		m, _, _ := unstructured.NestedStringMap(obj.Object, "metadata", field)
		if len(m) == 0 {
			continue
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		delete(m, keys[len(keys)-1])
		unstructured.SetNestedStringMap(obj.Object, m, "metadata", field)
		return true
	}
	return false
}

// removeListElement drops the last element of the first list (in sorted
// key order, outside metadata) with two elements or more.
func removeListElement(obj *unstructured.Unstructured) bool {
	for _, k := range sortedKeysOf(obj.Object) {
		if k != "metadata" && dropLast(obj.Object, k) {
			return true
		}
	}
	return false
}

func dropLast(parent map[string]any, key string) bool {
	switch v := parent[key].(type) {
	case []any:
		if len(v) >= 2 {
			parent[key] = v[:len(v)-1]
			return true
		}
		for _, e := range v {
			if m, ok := e.(map[string]any); ok && dropLastIn(m) {
				return true
			}
		}
	case map[string]any:
		return dropLastIn(v)
	}
	return false
}

func dropLastIn(m map[string]any) bool {
	for _, k := range sortedKeysOf(m) {
		if dropLast(m, k) {
			return true
		}
	}
	return false
}

func sortedKeysOf(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// invalidEdits are the edits of the test that make an object the server
// refuses as invalid, so that its dry run has no result to compare with
// (the local computation does not validate; docs/local-server-side.md):
// the last argument of a Job's container (a Job's template is
// immutable), the last type of an anyOf (a CRD schema must then be
// structural), the last of a CRD's versions (the storage version).
var invalidEdits = []string{
	"ingress-nginx Job/ingress-nginx-admission-create (list element removed)",
	"ingress-nginx Job/ingress-nginx-admission-patch (list element removed)",
	"prometheus-operator CustomResourceDefinition/prometheusrules.monitoring.coreos.com (list element removed)",
	"gatekeeper CustomResourceDefinition/providers.externaldata.gatekeeper.sh (list element removed)",
}

// knownLocalDifferences are the differences docs/local-server-side.md
// explains, by kind ("" any) and a substring of the difference.
// Each is a default the server adds again inside a value that server-side
// apply replaces whole (an atomic list or map): the file leaves the field
// out, the live object has it, the local result cannot know it.
var knownLocalDifferences = []struct{ kind, field string }{
	{"", ".valueFrom.fieldRef.apiVersion: only in the server's result"},
	{"NetworkPolicy", "].protocol: only in the server's result"},
	{"ValidatingWebhookConfiguration", "].scope: only in the server's result"},
	{"MutatingWebhookConfiguration", "].scope: only in the server's result"},
}

func knownLocalDifference(kind, d string) bool {
	for _, k := range knownLocalDifferences {
		if (k.kind == "" || k.kind == kind) && strings.Contains(d, k.field) {
			return true
		}
	}
	return false
}
