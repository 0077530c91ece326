package apply_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/kapply/kapply/internal/testcluster"
	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/load"
	"github.com/kapply/kapply/pkg/schema"
)

// otherWriter is the field manager of every write that is not an apply:
// the "another writer" of the page's scenarios (a controller, kubectl
// patch or kubectl scale).
const otherWriter = "other-writer"

var (
	configMaps   = k8sschema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	services     = k8sschema.GroupVersionResource{Version: "v1", Resource: "services"}
	deployments  = k8sschema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	daemonSets   = k8sschema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}
	statefulSets = k8sschema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}
)

// objRef names one object of a scenario inside the namespace it runs in.
type objRef struct {
	gvr  k8sschema.GroupVersionResource
	name string
}

func (r objRef) String() string { return r.gvr.Resource + "/" + r.name }

// tool is what applies a scenario's files: kapply (apply.Run) or kubectl.
type tool int

const (
	kapplyTool tool = iota
	kubectlTool
)

func (tl tool) String() string {
	if tl == kubectlTool {
		return "kubectl"
	}
	return "kapply"
}

// world is where one run of a scenario happens: a fresh namespace, a
// directory holding the file being applied, and the tool applying it.
type world struct {
	tool      tool
	ns        string
	dir       string
	cacheDir  string
	mergeKeys []schema.Override
	// lastFile is the path of the file the last apply step wrote.
	lastFile string
}

func newWorld(t *testing.T, tl tool, mergeKeys []schema.Override) *world {
	t.Helper()
	return &world{tool: tl, ns: cluster.Namespace(t), dir: tempDir(t), cacheDir: tempDir(t), mergeKeys: mergeKeys}
}

// tempDir is t.TempDir without the test's name in the path: kubectl's -f
// splits paths at commas, which subtest names may hold.
func tempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "kapply-it-")
	if err != nil {
		t.Fatalf("creating a temporary directory: %v", err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("removing %s: %v", dir, err)
		}
	})
	return dir
}

// step is one action of a scenario, run the same way in every world.
type step struct {
	desc string
	run  func(t *testing.T, w *world)
}

// applyFile writes manifest to the world's file and applies it with the
// world's tool.
func applyFile(manifest string) step {
	return step{desc: "apply", run: func(t *testing.T, w *world) {
		t.Helper()
		w.lastFile = filepath.Join(w.dir, "objects.yaml")
		if err := os.WriteFile(w.lastFile, []byte(manifest), 0o644); err != nil {
			t.Fatalf("writing the manifest: %v", err)
		}
		if w.tool == kubectlTool {
			runKubectl(t, w, "apply", "-f", w.lastFile)
			return
		}
		mustKapply(t, w, w.lastFile)
	}}
}

// patchBy is a write of another writer: a patch of the given type.
func patchBy(ref objRef, pt types.PatchType, body string) step {
	return step{desc: fmt.Sprintf("%s patch of %s", pt, ref), run: func(t *testing.T, w *world) {
		t.Helper()
		_, err := dyn(t).Resource(ref.gvr).Namespace(w.ns).Patch(context.Background(), ref.name, pt, []byte(body), metav1.PatchOptions{FieldManager: otherWriter})
		if err != nil {
			t.Fatalf("another writer patching %s with %s: %v", ref, body, err)
		}
	}}
}

// scaleTo is `kubectl scale`: a write to the scale subresource.
func scaleTo(ref objRef, replicas int) step {
	return step{desc: fmt.Sprintf("scale %s to %d", ref, replicas), run: func(t *testing.T, w *world) {
		t.Helper()
		body := fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas)
		_, err := dyn(t).Resource(ref.gvr).Namespace(w.ns).Patch(context.Background(), ref.name, types.MergePatchType, []byte(body), metav1.PatchOptions{FieldManager: otherWriter}, "scale")
		if err != nil {
			t.Fatalf("scaling %s: %v", ref, err)
		}
	}}
}

// runSteps runs every step in the world, in order.
func runSteps(t *testing.T, w *world, steps []step) {
	t.Helper()
	for i, s := range steps {
		t.Logf("%s: step %d: %s", w.tool, i+1, s.desc)
		s.run(t, w)
	}
}

// kapplyRun applies path with apply.Run and returns its events.
func kapplyRun(t *testing.T, w *world, path string) []apply.Event {
	t.Helper()
	return kapplyRunWith(t, w, path, nil)
}

// kapplyRunWith is kapplyRun with a hook on the client configuration (nil:
// none), for tests that watch or interfere with the requests.
func kapplyRunWith(t *testing.T, w *world, path string, wrap func(*rest.Config) *rest.Config) []apply.Event {
	t.Helper()
	return kapplyRunOptsWith(t, w, fileRun{path, apply.Options{Write: apply.WriteOptions{Namespace: w.ns}}}, wrap)
}

// fileRun is a run of `kapply apply -f path` with the library's options.
type fileRun struct {
	path string
	apply.Options
}

// tuning is what a test sets on the Applier itself (apply.Clients) rather
// than on one call.
type tuning struct {
	mergeKeys   []schema.Override
	backoff     wait.Backoff
	retryWindow time.Duration
	parallel    int
}

// runFiles is what `kapply apply -f paths` runs: load the files (with the
// prune selector, as kubectl's -l), then Apply them with an Applier built
// from getter and tune.
func runFiles(ctx context.Context, getter genericclioptions.RESTClientGetter, paths []string, opts apply.Options, tune tuning) ([]apply.Event, error) {
	selector := ""
	if opts.Prune != nil {
		selector = opts.Prune.Selector
	}
	in := loadInput(getter, load.Files{Filenames: paths}, selector)
	cfg, err := getter.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	mapper, err := getter.ToRESTMapper()
	if err != nil {
		return nil, err
	}
	dc, err := getter.ToDiscoveryClient()
	if err != nil {
		return nil, err
	}
	clients, err := apply.NewClients(cfg, mapper, dc, tune.mergeKeys)
	if err != nil {
		return nil, err
	}
	clients.Backoff, clients.RetryWindow, clients.Parallel = tune.backoff, tune.retryWindow, tune.parallel
	return apply.NewApplier(clients).Apply(ctx, in, opts)
}

// loadInput is what `kapply apply -f` gives the library: the files loaded
// (pkg/load), with their sources.
func loadInput(getter genericclioptions.RESTClientGetter, files load.Files, selector string) apply.Input {
	objects, errs := load.Load(getter, files, selector)
	objs, sources := load.Split(objects)
	return apply.Input{Objects: objs, Sources: sources, Errors: errs}
}

// kapplyRunOpts applies run.path with run's options in the world.
func kapplyRunOpts(t *testing.T, w *world, opts fileRun) []apply.Event {
	t.Helper()
	return kapplyRunOptsWith(t, w, opts, nil)
}

func kapplyRunOptsWith(t *testing.T, w *world, run fileRun, wrap func(*rest.Config) *rest.Config) []apply.Event {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(true)
	flags.KubeConfig = &cluster.Kubeconfig
	flags.CacheDir = &w.cacheDir
	flags.WrapConfigFn = wrap
	events, err := runFiles(context.Background(), flags, []string{run.path}, run.Options, tuning{mergeKeys: w.mergeKeys})
	if err != nil {
		t.Fatalf("kapply: %v", err)
	}
	return events
}

// mustKapply applies path and fails the test on any failed object.
func mustKapply(t *testing.T, w *world, path string) []apply.Event {
	t.Helper()
	events := kapplyRun(t, w, path)
	failOnFailures(t, events)
	return events
}

func failOnFailures(t *testing.T, events []apply.Event) {
	t.Helper()
	for _, ev := range events {
		for _, warning := range ev.Warnings {
			t.Logf("kapply warning: %s", warning)
		}
		if ev.Outcome == apply.Failed {
			t.Fatalf("kapply failed: %v", ev.Err)
		}
	}
}

// assertReapply applies the world's last file again with kapply and wants
// every object unchanged: apply is idempotent, also for a file that keeps
// asking to clear a field the server defaults again (the server stores
// nothing, and kapply says so).
func assertReapply(t *testing.T, w *world) {
	t.Helper()
	events := kapplyRun(t, w, w.lastFile)
	failOnFailures(t, events)
	for _, ev := range events {
		if ev.Outcome != apply.Unchanged {
			t.Errorf("re-applying the final file: %s %s, want unchanged", apply.ObjectRef(ev.Object), ev.Outcome)
		}
	}
}

// haveKubectl reports whether kubectl is on PATH; comparisons with it are
// skipped otherwise.
func haveKubectl(t *testing.T) bool {
	t.Helper()
	return testcluster.HaveKubectl(t)
}

func runKubectl(t *testing.T, w *world, args ...string) string {
	t.Helper()
	args = append(args, "-n", w.ns, "--kubeconfig", cluster.Kubeconfig, "--cache-dir", w.cacheDir)
	out, err := exec.Command("kubectl", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("kubectl: %s", strings.TrimSpace(string(out)))
	return string(out)
}

func dyn(t *testing.T) dynamic.Interface {
	t.Helper()
	c, err := dynamic.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatalf("creating client: %v", err)
	}
	return c
}

// get reads one live object of the world.
func get(t *testing.T, w *world, ref objRef) *unstructured.Unstructured {
	t.Helper()
	u, err := dyn(t).Resource(ref.gvr).Namespace(w.ns).Get(context.Background(), ref.name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading %s in %s: %v", ref, w.ns, err)
	}
	return u
}

// liveObjects reads the scenario's objects in the world.
func liveObjects(t *testing.T, w *world, refs []objRef) map[objRef]*unstructured.Unstructured {
	t.Helper()
	out := map[objRef]*unstructured.Unstructured{}
	for _, ref := range refs {
		out[ref] = get(t, w, ref)
	}
	return out
}

// normalize drops what legitimately differs between two namespaces or two
// clients: identity, versions, managedFields, the namespace (also inside
// the last-applied record, which is decoded so key order does not matter)
// and a Service's allocated cluster IPs.
func normalize(t *testing.T, u *unstructured.Unstructured) map[string]any {
	t.Helper()
	obj := u.DeepCopy().Object
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "managedFields", "generation", "namespace"} {
		unstructured.RemoveNestedField(obj, "metadata", f)
	}
	unstructured.RemoveNestedField(obj, "spec", "clusterIP")
	unstructured.RemoveNestedField(obj, "spec", "clusterIPs")
	annotations, _, err := unstructured.NestedMap(obj, "metadata", "annotations")
	if err != nil {
		t.Fatalf("reading annotations: %v", err)
	}
	if record, ok := annotations[lastapplied.Annotation].(string); ok {
		var decoded map[string]any
		if err := json.Unmarshal([]byte(record), &decoded); err != nil {
			t.Fatalf("decoding the last-applied record %q: %v", record, err)
		}
		unstructured.RemoveNestedField(decoded, "metadata", "namespace")
		annotations[lastapplied.Annotation] = decoded
		obj["metadata"].(map[string]any)["annotations"] = annotations
	}
	return obj
}

// assertSameAsKubectl compares the normalized objects of two worlds.
func assertSameAsKubectl(t *testing.T, ours, theirs map[objRef]*unstructured.Unstructured) {
	t.Helper()
	for ref, o := range ours {
		a, b := normalize(t, o), normalize(t, theirs[ref])
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s differs from kubectl's result (- kapply, + kubectl):\n%s", ref, lineDiff(toYAML(t, a), toYAML(t, b)))
		}
	}
}

func toYAML(t *testing.T, v any) string {
	t.Helper()
	out, err := yaml.Marshal(v)
	if err != nil {
		t.Fatalf("printing as YAML: %v", err)
	}
	return string(out)
}

// lineDiff is a minimal line diff (longest common subsequence), enough to
// point at the differing fields of two YAML documents.
func lineDiff(a, b string) string {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			out.WriteString("  " + x[i] + "\n")
			i, j = i+1, j+1
		case j == len(y) || (i < len(x) && lcs[i+1][j] >= lcs[i][j+1]):
			out.WriteString("- " + x[i] + "\n")
			i++
		default:
			out.WriteString("+ " + y[j] + "\n")
			j++
		}
	}
	return out.String()
}

// nested reads the field at path of obj; list elements are entered as
// "[key=value]" (the element whose field key has that value) or "[i]".
func nested(t *testing.T, obj *unstructured.Unstructured, path ...string) (any, bool) {
	t.Helper()
	var cur any = obj.Object
	for _, p := range path {
		switch {
		case strings.HasPrefix(p, "["):
			list, ok := cur.([]any)
			if !ok {
				return nil, false
			}
			if cur, ok = element(list, strings.Trim(p, "[]")); !ok {
				return nil, false
			}
		default:
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			if cur, ok = m[p]; !ok {
				return nil, false
			}
		}
	}
	return cur, true
}

func element(list []any, sel string) (any, bool) {
	key, value, keyed := strings.Cut(sel, "=")
	for i, e := range list {
		if !keyed && fmt.Sprint(i) == sel {
			return e, true
		}
		if m, ok := e.(map[string]any); keyed && ok && fmt.Sprint(m[key]) == value {
			return e, true
		}
	}
	return nil, false
}

// wantField checks the field at path; want nil means the field is absent.
func wantField(t *testing.T, obj *unstructured.Unstructured, want any, path ...string) {
	t.Helper()
	got, ok := nested(t, obj, path...)
	switch {
	case want == nil && ok:
		t.Errorf("%s %s: %v, want it absent", obj.GetName(), strings.Join(path, "."), toJSON(got))
	case want != nil && !ok:
		t.Errorf("%s %s: absent, want %v", obj.GetName(), strings.Join(path, "."), toJSON(want))
	case want != nil && toJSON(got) != toJSON(want):
		t.Errorf("%s %s: %v, want %v", obj.GetName(), strings.Join(path, "."), toJSON(got), toJSON(want))
	}
}

// toJSON prints a value so that int and int64 compare equal.
func toJSON(v any) string {
	out, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(out)
}

// keysOf lists the values of field key of the list's elements, in order.
func keysOf(t *testing.T, obj *unstructured.Unstructured, key string, path ...string) []string {
	t.Helper()
	v, _ := nested(t, obj, path...)
	list, _ := v.([]any)
	var out []string
	for _, e := range list {
		if m, ok := e.(map[string]any); ok {
			out = append(out, fmt.Sprint(m[key]))
		} else {
			out = append(out, fmt.Sprint(e))
		}
	}
	return out
}

// requireCluster skips without a cluster (only with -short).
func requireCluster(t *testing.T) {
	t.Helper()
	testcluster.Require(t, cluster)
}

// writeManifest writes manifest as the world's file without applying it.
func writeManifest(t *testing.T, w *world, manifest string) string {
	t.Helper()
	w.lastFile = filepath.Join(w.dir, "objects.yaml")
	if err := os.WriteFile(w.lastFile, []byte(manifest), 0o644); err != nil {
		t.Fatalf("writing the manifest: %v", err)
	}
	return w.lastFile
}

// jsonPatch is another writer's JSON patch, callable off the test's
// goroutine (it returns its error).
func jsonPatch(w *world, ref objRef, body string) error {
	c, err := dynamic.NewForConfig(cluster.Config)
	if err != nil {
		return err
	}
	_, err = c.Resource(ref.gvr).Namespace(w.ns).Patch(context.Background(), ref.name, types.JSONPatchType, []byte(body), metav1.PatchOptions{FieldManager: otherWriter})
	return err
}

// patchCall is one request patchRecorder saw.
type patchCall struct {
	contentType, body string
	status            int
}

// patchRecorder watches kapply's requests that match: it records each one
// with the server's status, and runs beforeFirst just before the first is
// sent — a concurrent writer between kapply's read and its write.
type patchRecorder struct {
	match       func(*http.Request) bool
	beforeFirst func() error
	hookErr     error

	mu    sync.Mutex
	calls []patchCall
}

// wrap is a ConfigFlags.WrapConfigFn.
func (p *patchRecorder) wrap(c *rest.Config) *rest.Config {
	c = rest.CopyConfig(c)
	c.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) { return p.roundTrip(next, req) })
	})
	return c
}

func (p *patchRecorder) roundTrip(next http.RoundTripper, req *http.Request) (*http.Response, error) {
	if !p.match(req) {
		return next.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	req = req.Clone(req.Context())
	req.Body = io.NopCloser(bytes.NewReader(body))
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.calls) == 0 && p.beforeFirst != nil {
		p.hookErr = p.beforeFirst()
	}
	resp, err := next.RoundTrip(req)
	call := patchCall{contentType: req.Header.Get("Content-Type"), body: string(body)}
	if resp != nil {
		call.status = resp.StatusCode
	}
	p.calls = append(p.calls, call)
	return resp, err
}

func (p *patchRecorder) recorded() []patchCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.calls)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
