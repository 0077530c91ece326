package apply_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/kapply/kapply/pkg/apply"
)

// keyedWriter is a keyed list another writer keeps adding to while kapply
// applies its file again and again.
type keyedWriter struct {
	name string
	ref  objRef
	// file is the manifest for round i of kapply.
	file func(i int) string
	// add is the other writer's patch adding element name.
	add func(name string) (types.PatchType, string)
	// path and key read the list's element names.
	path []string
	key  string
	// mine are the file's elements.
	mine []string
}

// TestConcurrentWritersLoseNothing: kapply applies a file 8 times while
// another writer adds an element to the same keyed list every few
// milliseconds — Deployment containers (merged by name with a strategic
// merge patch) and a custom resource's list-map (sent whole under the
// resourceVersion, so a concurrent write gives 409 and a re-plan). No
// element of either writer is lost; a run that gives up after repeated
// conflicts says so. This extends TestCustomResourceConcurrentWriterIsNotLost
// (one write between read and patch) to a stream of writes.
func TestConcurrentWritersLoseNothing(t *testing.T) {
	requireCluster(t)
	applyListCRDs(t)
	cases := []keyedWriter{{
		name: "deployment containers by name",
		ref:  webDeployment,
		file: func(i int) string {
			return fmt.Sprintf(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: app, image: "app:%d"}
      - {name: log, image: "log:%d"}
`, i, i)
		},
		add: func(name string) (types.PatchType, string) {
			return types.StrategicMergePatchType, fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":%q,"image":"x"}]}}}}`, name)
		},
		path: []string{"spec", "template", "spec", "containers"}, key: "name", mine: []string{"app", "log"},
	}, {
		name: "custom resource list-map",
		ref:  theGadget,
		file: func(i int) string {
			return fmt.Sprintf(`
apiVersion: lists.kapply.test/v1
kind: Gadget
metadata: {name: g}
spec:
  byName: [{name: a, value: "%d"}, {name: b, value: "%d"}]
`, i, i)
		},
		add: func(name string) (types.PatchType, string) {
			return types.JSONPatchType, fmt.Sprintf(`[{"op":"add","path":"/spec/byName/-","value":{"name":%q,"value":"other"}}]`, name)
		},
		path: []string{"spec", "byName"}, key: "name", mine: []string{"a", "b"},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { racingWriters(t, c) })
	}
}

func racingWriters(t *testing.T, c keyedWriter) {
	const rounds = 8
	w := newWorld(t, kapplyTool, nil)
	applyFile(c.file(0)).run(t, w)

	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var added []string
	var writerErr error
	wg.Go(func() {
		client := dyn(t).Resource(c.ref.gvr).Namespace(w.ns)
		for n := 0; ctx.Err() == nil; n++ {
			name := fmt.Sprintf("other-%d", n)
			pt, body := c.add(name)
			if _, err := client.Patch(context.Background(), c.ref.name, pt, []byte(body), metav1.PatchOptions{FieldManager: otherWriter}); err != nil {
				writerErr = err
				return
			}
			added = append(added, name)
			time.Sleep(15 * time.Millisecond)
		}
	})
	gaveUp := 0
	var conflicts atomic.Int64
	count409 := func(cfg *rest.Config) *rest.Config {
		cfg = rest.CopyConfig(cfg)
		cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
			return roundTripFunc(func(req *http.Request) (*http.Response, error) {
				resp, err := next.RoundTrip(req)
				if resp != nil && resp.StatusCode == http.StatusConflict {
					conflicts.Add(1)
				}
				return resp, err
			})
		})
		return cfg
	}
	for i := 1; i <= rounds; i++ {
		for _, ev := range kapplyRunWith(t, w, writeManifest(t, w, c.file(i)), count409) {
			switch {
			case ev.Outcome != apply.Failed:
			case apierrors.IsConflict(ev.Err) && errors.As(ev.Err, new(*apply.ObjectError)):
				gaveUp++ // reported, named, and nothing written
			default:
				t.Errorf("round %d: %v", i, ev.Err)
			}
		}
	}
	stop()
	wg.Wait()
	if writerErr != nil {
		t.Fatalf("the other writer: %v", writerErr)
	}
	live := keysOf(t, get(t, w, c.ref), c.key, c.path...)
	for _, name := range append(slices.Clone(c.mine), added...) {
		if !slices.Contains(live, name) {
			t.Errorf("%s lost: live has %v", name, live)
		}
	}
	t.Logf("%d kapply runs against %d concurrent additions: %d elements live; %d conflicts (409) re-planned, %d runs gave up after repeated conflicts",
		rounds, len(added), len(live), conflicts.Load(), gaveUp)
	if gaveUp == 0 {
		assertReapply(t, w)
	}
}
