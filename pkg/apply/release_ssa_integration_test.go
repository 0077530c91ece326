package apply_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	smdpath "sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapply/kapply/pkg/apply"
	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/lastapplied"
	"github.com/kapply/kapply/pkg/ownership"
)

var dataReplicas = smdpath.MakePathOrDie("data", "replicas")

// clientSideOwns reports whether kubectl-client-side-apply's Update entry
// of live owns path.
func clientSideOwns(t *testing.T, live *unstructured.Unstructured, path smdpath.Path) bool {
	t.Helper()
	set, err := ownership.EntrySet(live.GetManagedFields(), apply.ClientSideFieldManager, metav1.ManagedFieldsOperationUpdate)
	if err != nil {
		t.Fatal(err)
	}
	return set.Has(path)
}

// applyConfigMap applies a ConfigMap "web" with data, client-side or
// server-side, and returns the live object.
func applyConfigMap(t *testing.T, applier *apply.Applier, ns, name string, data map[string]any, serverSide bool) *unstructured.Unstructured {
	t.Helper()
	events, err := applier.Apply(context.Background(), apply.Input{Objects: []*unstructured.Unstructured{configMap(name, data)}},
		apply.Options{Write: apply.WriteOptions{Namespace: ns, ServerSide: serverSide}})
	if err != nil {
		t.Fatalf("apply (server-side %v): %v", serverSide, err)
	}
	for _, ev := range events {
		if ev.Err != nil {
			t.Fatalf("apply (server-side %v): %v", serverSide, ev.Err)
		}
	}
	live, err := dyn(t).Resource(configMaps).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return live
}

// TestReleaseThenServerSideApplyKeepsField is issue 30's data loss through
// the library: Applier.Release of data.replicas, then a server-side apply
// of the object without it. Release used to edit only the record, so
// kubectl-client-side-apply still owned the field, the CSA→SSA upgrade
// handed it to kubectl, and the apply deleted it. A second object is
// released as older kapply versions did (the record alone): the upgrade
// hands over only what the record names, so it keeps its field too.
func TestReleaseThenServerSideApplyKeepsField(t *testing.T) {
	requireCluster(t)
	ctx := context.Background()
	ns := cluster.Namespace(t)
	applier, err := newExampleApplier(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	withReplicas := map[string]any{"mode": "fast", "replicas": "3"}
	for _, name := range []string{"web", "older"} {
		if live := applyConfigMap(t, applier, ns, name, withReplicas, false); !clientSideOwns(t, live, dataReplicas) {
			t.Fatalf("%s: after a client-side apply, kubectl-client-side-apply does not own data.replicas", name)
		}
	}

	released, err := applier.Release(ctx, apply.Input{Objects: []*unstructured.Unstructured{configMap("web", withReplicas)}},
		apply.ReleaseOptions{Namespace: ns, Fields: []fieldpath.Path{mustParse(t, "data.replicas")}})
	if err != nil || len(released) != 1 || released[0].Err != nil {
		t.Fatalf("Release: %v %+v", err, released)
	}
	live, err := dyn(t).Resource(configMaps).Namespace(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if clientSideOwns(t, live, dataReplicas) {
		t.Errorf("after Release, kubectl-client-side-apply still owns data.replicas")
	}
	if record, _ := lastapplied.Read(live); record["data"].(map[string]any)["replicas"] != nil {
		t.Errorf("after Release, the record still sets data.replicas")
	}

	releaseAsOlderVersions(t, ns, "older", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"older","namespace":"`+ns+`"},"data":{"mode":"fast"}}`)

	for _, name := range []string{"web", "older"} {
		live := applyConfigMap(t, applier, ns, name, map[string]any{"mode": "fast"}, true)
		if got, _, _ := unstructured.NestedString(live.Object, "data", "replicas"); got != "3" {
			t.Errorf("%s: data.replicas %q after a server-side apply without it, want the released \"3\"", name, got)
		}
	}
}

// releaseAsOlderVersions writes record as name's last-applied record and
// changes nothing else, as kapply release did before it edited
// managedFields: kubectl-client-side-apply keeps what it owned.
func releaseAsOlderVersions(t *testing.T, ns, name, record string) {
	t.Helper()
	patch := `{"metadata":{"annotations":{` + quote(lastapplied.Annotation) + `:` + quote(record) + `}}}`
	live, err := dyn(t).Resource(configMaps).Namespace(ns).Patch(context.Background(), name, types.MergePatchType, []byte(patch),
		metav1.PatchOptions{FieldManager: apply.ClientSideFieldManager})
	if err != nil {
		t.Fatal(err)
	}
	if !clientSideOwns(t, live, dataReplicas) {
		t.Fatalf("%s: the old-style release took data.replicas from kubectl-client-side-apply; the test no longer simulates it", name)
	}
}

func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// TestReleaseRefusedOnConcurrentChange: Release's one write (record and
// managedFields) carries the resourceVersion it was planned against. An
// object changed between the read and the write is refused with a
// conflict, and neither the record nor managedFields is changed.
func TestReleaseRefusedOnConcurrentChange(t *testing.T) {
	requireCluster(t)
	ctx := context.Background()
	ns := cluster.Namespace(t)
	applier, err := newExampleApplier(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	withReplicas := map[string]any{"mode": "fast", "replicas": "3"}
	applyConfigMap(t, applier, ns, "web", withReplicas, false)

	// Just before Release's patch leaves, someone else writes the object.
	cfg := rest.CopyConfig(cluster.Config)
	var once sync.Once
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodPatch && strings.HasSuffix(req.URL.Path, "/configmaps/web") {
				once.Do(func() {
					patch := []byte(`{"data":{"other":"x"}}`)
					if _, err := dyn(t).Resource(configMaps).Namespace(ns).Patch(ctx, "web", types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "someone"}); err != nil {
						t.Errorf("concurrent write: %v", err)
					}
				})
			}
			return rt.RoundTrip(req)
		})
	}
	racing, err := newExampleApplier(cfg)
	if err != nil {
		t.Fatal(err)
	}
	released, err := racing.Release(ctx, apply.Input{Objects: []*unstructured.Unstructured{configMap("web", withReplicas)}},
		apply.ReleaseOptions{Namespace: ns, Fields: []fieldpath.Path{mustParse(t, "data.replicas")}})
	if err != nil || len(released) != 1 {
		t.Fatalf("Release: %v %+v", err, released)
	}
	if released[0].Err == nil || !strings.Contains(released[0].Err.Error(), "modified") {
		t.Errorf("Release after a concurrent write: err %v, want the server's conflict", released[0].Err)
	}
	live, err := dyn(t).Resource(configMaps).Namespace(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if other, _, _ := unstructured.NestedString(live.Object, "data", "other"); other != "x" {
		t.Fatalf("the concurrent write did not happen (data.other %q)", other)
	}
	if !clientSideOwns(t, live, dataReplicas) {
		t.Errorf("a refused Release took data.replicas from kubectl-client-side-apply")
	}
	if record, _ := lastapplied.Read(live); record["data"].(map[string]any)["replicas"] != "3" {
		t.Errorf("a refused Release changed the record: %v", record["data"])
	}
}
