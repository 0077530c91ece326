package realworld_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"

	"github.com/kapply/kapply/pkg/plan"
)

// TestRealWorld applies every project of the corpus with kapply, client-side
// and server-side: create, re-apply (every object unchanged), diff (exit 0),
// an edit (that object configured and the change live, every other object
// unchanged), delete (every object gone). With KAPPLY_REALWORLD_KUBECTL=1
// it also runs kubectl (from PATH) through the same steps — about 15 more
// minutes, so not in CI — and logs both as one table, which
// docs/realworld.md records; kubectl's results are not asserted.
// KAPPLY_REALWORLD_TABLE=FILE writes the table as Markdown to FILE.
func TestRealWorld(t *testing.T) {
	if cluster == nil {
		t.Skip("no local cluster (run `make k8s-bin`)")
	}
	projects := loadProjects(t)
	tools := []string{kapplyBin}
	if os.Getenv("KAPPLY_REALWORLD_KUBECTL") != "" {
		path, err := exec.LookPath("kubectl")
		if err != nil {
			t.Fatalf("KAPPLY_REALWORLD_KUBECTL is set: %v", err)
		}
		tools = append(tools, path)
	}
	var rows []row
	// finals are plain kapply apply's objects after the edit, by project
	// and mode: the same steps through kapply plan -o P + kapply apply
	// --plan P must leave the same objects.
	finals := map[string]map[string]map[string]any{}
	for _, p := range projects {
		for _, bin := range tools {
			for _, serverSide := range []bool{false, true} {
				for _, viaPlan := range []bool{false, true} {
					if viaPlan && bin != kapplyBin {
						continue
					}
					r := &runner{t: t, project: p, bin: bin, serverSide: serverSide, viaPlan: viaPlan, finals: finals}
					t.Run(r.name(), func(t *testing.T) {
						r.t = t
						row := r.steps()
						if !viaPlan {
							rows = append(rows, row)
						}
					})
				}
			}
		}
	}
	table := renderTable(rows)
	t.Log("\n" + table)
	if out := os.Getenv("KAPPLY_REALWORLD_TABLE"); out != "" {
		if err := os.WriteFile(out, []byte(table), 0o644); err != nil {
			t.Errorf("writing the table: %v", err)
		}
	}
}

// runner takes one project through the steps with one tool in one mode.
type runner struct {
	t          *testing.T
	project    *project
	bin        string
	serverSide bool
	// viaPlan applies as kapply plan -o P, then kapply apply --plan P.
	viaPlan bool
	finals  map[string]map[string]map[string]any
}

func (r *runner) tool() string {
	if r.bin == kapplyBin {
		return "kapply"
	}
	return "kubectl"
}

func (r *runner) isKapply() bool { return r.bin == kapplyBin }

func (r *runner) mode() string {
	if r.serverSide {
		return "server-side"
	}
	return "client-side"
}

func (r *runner) name() string {
	if r.viaPlan {
		return r.project.name + "/kapply-plan/" + r.mode()
	}
	return r.project.name + "/" + r.tool() + "/" + r.mode()
}

// apply applies dir: with apply, or through a saved plan.
func (r *runner) apply(dir string) result {
	r.t.Helper()
	if !r.viaPlan {
		return r.run(r.applyArgs(dir)...)
	}
	planFile := r.t.TempDir() + "/plan.json"
	args := append([]string{"plan", "-f", dir, "-R", "-o", planFile}, r.applyArgs(dir)[4:]...)
	if made := r.run(args...); made.exit != 0 {
		r.t.Fatalf("kapply plan: exit %d\n%s", made.exit, made.stderr)
	}
	r.logWaves(planFile)
	return r.run("apply", "--plan", planFile, "-f", dir, "-R")
}

// row is one line of the table: what each step printed and exited with.
type row struct {
	project, tool, mode                string
	objects                            int
	create, reapply, diff, edit, clean string
}

func (r *runner) steps() row {
	p := r.project
	out := row{project: p.name, tool: r.tool(), mode: r.mode(), objects: len(p.objects)}
	r.createNamespace()
	defer r.cleanUp()

	create := r.apply(p.dir)
	out.create = create.String()
	r.expect(create, "create", map[string]int{"created": len(p.objects)})

	reapply := r.apply(p.dir)
	out.reapply = reapply.String()
	r.expect(reapply, "re-apply", map[string]int{"unchanged": len(p.objects)})

	diff := r.run(r.diffArgs()...)
	out.diff = fmt.Sprintf("exit %d", diff.exit)
	if r.isKapply() && diff.exit != 0 {
		r.t.Errorf("diff after re-apply: exit %d, want 0\n%s%s", diff.exit, diff.stdout, diff.stderr)
	}

	dir, target := p.edited(r.t)
	edit := r.apply(dir)
	landed := r.editLanded(target)
	out.edit = fmt.Sprintf("%s; %s %s, edit live: %v", edit, ref(target), edit.verbs[ref(target)], landed)
	if r.isKapply() {
		r.expect(edit, "edit", map[string]int{"configured": 1, "unchanged": len(p.objects) - 1})
		wantVerb := "configured"
		if r.serverSide {
			wantVerb = "serverside-applied"
		}
		if edit.verbs[ref(target)] != wantVerb || !landed {
			r.t.Errorf("edit of %s: %q, live has the edit: %v", ref(target), edit.verbs[ref(target)], landed)
		}
	}

	if r.isKapply() {
		r.compareFinal()
	}

	// kubectl delete waits for finalizers by default; no namespace
	// controller runs here to finalize Namespaces.
	delArgs := []string{"delete", "-f", dir, "-R", "--ignore-not-found"}
	if !r.isKapply() {
		delArgs = append(delArgs, "--wait=false")
	}
	del := r.run(delArgs...)
	deleting := r.deleting()
	out.clean = fmt.Sprintf("exit %d, %d/%d deleted", del.exit, deleting, len(p.objects))
	if r.isKapply() && (del.exit != 0 || deleting != len(p.objects)) {
		r.t.Errorf("delete: exit %d, %d of %d objects deleted\n%s", del.exit, deleting, len(p.objects), del.stderr)
	}
	return out
}

func (r *runner) applyArgs(dir string) []string {
	args := []string{"apply", "-f", dir, "-R"}
	if r.serverSide {
		args = append(args, "--server-side")
	}
	return args
}

// diffArgs: kubectl diff --server-side compares with a server-side apply;
// kapply diff plans as kapply apply does in either mode.
func (r *runner) diffArgs() []string {
	args := []string{"diff", "-f", r.project.dir, "-R"}
	if r.serverSide && !r.isKapply() {
		args = append(args, "--server-side")
	}
	return args
}

// expect checks kapply's exit code and counts of output verbs.
func (r *runner) expect(res result, step string, want map[string]int) {
	if !r.isKapply() {
		return
	}
	r.t.Helper()
	got := res.counts()
	if r.serverSide {
		// --server-side lines say "serverside-applied", as kubectl's; the
		// summary line tells created, configured and unchanged apart.
		got = res.summaryCounts()
	}
	if res.exit != 0 || !equalCounts(got, want) {
		r.t.Errorf("%s: exit %d, outcomes %v, want exit 0 and %v\nstdout:\n%s\nstderr:\n%s", step, res.exit, got, want, res.stdout, res.stderr)
	}
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// result is what one command printed and its exit code.
type result struct {
	exit           int
	stdout, stderr string
	// verbs maps "kind/name" to the last word of its output line.
	verbs map[string]string
}

func (r result) counts() map[string]int {
	counts := map[string]int{}
	for _, verb := range r.verbs {
		counts[verb]++
	}
	return counts
}

// summaryCounts reads kapply's summary line on stderr ("0 created, 3
// configured, 12 unchanged, 0 failed"): the outcomes counted at least once.
func (r result) summaryCounts() map[string]int {
	counts := map[string]int{}
	for _, line := range strings.Split(r.stderr, "\n") {
		if !strings.Contains(line, " created, ") || !strings.Contains(line, " failed") {
			continue
		}
		for _, part := range strings.Split(line, ", ") {
			var n int
			var word string
			if _, err := fmt.Sscanf(part, "%d %s", &n, &word); err == nil && n > 0 {
				counts[word] = n
			}
		}
	}
	return counts
}

// String is "exit 1: 9 created, 6 failed" (failed = named on stderr only).
func (r result) String() string {
	counts := r.counts()
	verbs := make([]string, 0, len(counts))
	for verb := range counts {
		verbs = append(verbs, verb)
	}
	sort.Strings(verbs)
	parts := make([]string, 0, len(verbs))
	for _, verb := range verbs {
		parts = append(parts, fmt.Sprintf("%d %s", counts[verb], verb))
	}
	return fmt.Sprintf("exit %d: %s", r.exit, strings.Join(parts, ", "))
}

func (r *runner) run(args ...string) result {
	r.t.Helper()
	args = append(args, "--kubeconfig", cluster.Kubeconfig)
	if r.project.namespace != "" {
		args = append(args, "-n", r.project.namespace)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := result{stdout: stdout.String(), stderr: stderr.String(), verbs: parseLines(stdout.String())}
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		res.exit = exitErr.ExitCode()
	case err != nil:
		r.t.Fatalf("running %s %v: %v", r.tool(), args, err)
	}
	return res
}

// parseLines reads "kind.group/name verb" lines, as both tools print them.
func parseLines(out string) map[string]string {
	verbs := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || !strings.Contains(fields[0], "/") {
			continue
		}
		kindGroup, name, _ := strings.Cut(fields[0], "/")
		kind, _, _ := strings.Cut(kindGroup, ".")
		verbs[kind+"/"+name] = fields[len(fields)-1]
	}
	return verbs
}

// clients are the typed, dynamic and mapping clients of the test cluster.
type clients struct {
	core    kubernetes.Interface
	dynamic dynamic.Interface
	mapper  meta.RESTMapper
}

func newClients(t *testing.T) clients {
	t.Helper()
	core, err := kubernetes.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	return clients{core: core, dynamic: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))}
}

func (r *runner) createNamespace() {
	if r.project.namespace == "" {
		return
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.project.namespace}}
	_, err := newClients(r.t).core.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{})
	if err != nil {
		r.t.Fatalf("creating namespace %s: %v", r.project.namespace, err)
	}
}

// live reads the project's object as the server holds it; nil when absent.
func (r *runner) live(c clients, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	gvk := obj.GroupVersionKind()
	mapping, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("mapping %s: %w", gvk, err)
	}
	client := c.dynamic.Resource(mapping.Resource)
	var live *unstructured.Unstructured
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		live, err = client.Namespace(r.namespaceOf(obj)).Get(context.Background(), obj.GetName(), metav1.GetOptions{})
	} else {
		live, err = client.Get(context.Background(), obj.GetName(), metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return live, err
}

func (r *runner) namespaceOf(obj *unstructured.Unstructured) string {
	switch {
	case obj.GetNamespace() != "":
		return obj.GetNamespace()
	case r.project.namespace != "":
		return r.project.namespace
	}
	return "default"
}

func (r *runner) editLanded(target *unstructured.Unstructured) bool {
	live, err := r.live(newClients(r.t), target)
	if err != nil || live == nil {
		r.t.Errorf("reading %s after the edit: %v", ref(target), err)
		return false
	}
	return editLanded(live)
}

// deleting counts the project's objects that are gone or being deleted.
func (r *runner) deleting() int {
	c := newClients(r.t)
	n := 0
	for _, obj := range r.project.objects {
		live, err := r.live(c, obj)
		if err == nil && (live == nil || live.GetDeletionTimestamp() != nil) {
			n++
		}
	}
	return n
}

// cleanUp removes whatever the steps left, finalizes the namespaces (no
// namespace controller runs here) and waits until every object is gone, so
// the next project and mode start from an empty cluster.
func (r *runner) cleanUp() {
	c := newClients(r.t)
	ctx := context.Background()
	namespaces := map[string]bool{}
	if r.project.namespace != "" {
		namespaces[r.project.namespace] = true
	}
	for _, obj := range r.project.objects {
		if obj.GetKind() == "Namespace" {
			namespaces[obj.GetName()] = true
		}
		live, err := r.live(c, obj)
		if err != nil || live == nil || live.GetDeletionTimestamp() != nil {
			continue
		}
		gvk := obj.GroupVersionKind()
		mapping, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			continue
		}
		client := c.dynamic.Resource(mapping.Resource)
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			err = client.Namespace(r.namespaceOf(obj)).Delete(ctx, obj.GetName(), metav1.DeleteOptions{})
		} else {
			err = client.Delete(ctx, obj.GetName(), metav1.DeleteOptions{})
		}
		if err != nil && !apierrors.IsNotFound(err) {
			r.t.Errorf("cleaning up %s: %v", ref(obj), err)
		}
	}
	for ns := range namespaces {
		r.finalizeNamespace(c, ns)
	}
	r.waitGone(c)
}

func (r *runner) finalizeNamespace(c clients, name string) {
	ctx := context.Background()
	err := c.core.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		r.t.Errorf("deleting namespace %s: %v", name, err)
	}
	ns, err := c.core.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return
	}
	if err != nil {
		r.t.Errorf("reading namespace %s: %v", name, err)
		return
	}
	ns.Spec.Finalizers = nil
	if _, err := c.core.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		r.t.Errorf("finalizing namespace %s: %v", name, err)
	}
}

func (r *runner) waitGone(c clients) {
	deadline := time.Now().Add(5 * time.Minute)
	for _, obj := range r.project.objects {
		for {
			live, err := r.live(c, obj)
			if err == nil && live == nil {
				break
			}
			if time.Now().After(deadline) {
				r.t.Fatalf("%s is still there after the clean-up (err %v)", ref(obj), err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

func renderTable(rows []row) string {
	var b strings.Builder
	b.WriteString("| project | objects | tool | mode | create | re-apply | diff | edit | delete |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s | %s |\n",
			r.project, r.objects, r.tool, r.mode, r.create, r.reapply, r.diff, r.edit, r.clean)
	}
	return b.String()
}

// compareFinal keeps plain apply's objects after the edit, and compares
// those of the run through a saved plan with them.
func (r *runner) compareFinal() {
	r.t.Helper()
	c := newClients(r.t)
	got := map[string]map[string]any{}
	for _, obj := range r.project.objects {
		live, err := r.live(c, obj)
		if err != nil || live == nil {
			r.t.Errorf("reading %s: %v", ref(obj), err)
			continue
		}
		got[ref(obj)] = comparable(live)
	}
	key := r.project.name + "/" + r.mode()
	if !r.viaPlan {
		r.finals[key] = got
		return
	}
	want, ok := r.finals[key]
	if !ok {
		return
	}
	for name, obj := range want {
		if !reflect.DeepEqual(obj, got[name]) {
			r.t.Errorf("%s differs between apply and plan + apply --plan:\napply: %v\nplan:  %v", name, obj, got[name])
		}
	}
}

// comparable is live without what differs between two creations of one
// object: identity, versions, times, managedFields, allocated addresses
// and ports, a Job's UID in its selector and labels.
func comparable(live *unstructured.Unstructured) map[string]any {
	obj := live.DeepCopy().Object
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "managedFields", "generation"} {
		unstructured.RemoveNestedField(obj, "metadata", f)
	}
	unstructured.RemoveNestedField(obj, "status")
	if live.GetKind() == "Service" {
		unstructured.RemoveNestedField(obj, "spec", "clusterIP")
		unstructured.RemoveNestedField(obj, "spec", "clusterIPs")
		if ports, ok, _ := unstructured.NestedSlice(obj, "spec", "ports"); ok {
			for _, p := range ports {
				if port, ok := p.(map[string]any); ok {
					delete(port, "nodePort")
				}
			}
			_ = unstructured.SetNestedSlice(obj, ports, "spec", "ports")
		}
		unstructured.RemoveNestedField(obj, "spec", "healthCheckNodePort")
	}
	if live.GetKind() == "Job" {
		// The Job controller's selector names the Job's UID.
		unstructured.RemoveNestedField(obj, "spec", "selector")
		for _, label := range []string{"controller-uid", "batch.kubernetes.io/controller-uid"} {
			unstructured.RemoveNestedField(obj, "spec", "template", "metadata", "labels", label)
		}
	}
	return obj
}

// logWaves logs the waves the saved plan sends its items in (issue 36:
// the installs declare no order, and none is inferred for them).
func (r *runner) logWaves(planFile string) {
	r.t.Helper()
	f, err := os.Open(planFile)
	if err != nil {
		r.t.Fatal(err)
	}
	defer f.Close()
	p, err := plan.Decode(f)
	if err != nil {
		r.t.Fatalf("reading the plan: %v", err)
	}
	perWave := map[int]int{}
	for _, it := range p.Items {
		perWave[it.Wave]++
	}
	r.t.Logf("%s: %d items in %d wave(s): %v", r.project.name, len(p.Items), max(len(p.Gates), 1), perWave)
}
