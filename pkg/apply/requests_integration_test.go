package apply_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/kapply/kapply/pkg/apply"
)

// TestApplySendsOneRequestPerWrite: plain Apply, a plan executed in the
// same call, sends to the objects' resource one LIST and then only the
// writes, as before the one writer: no GET per object (the plan uses the
// live objects the LIST read), nothing for an unchanged object
// client-side, one apply patch per object server-side (and one more to
// share a new object's record, as kubectl --server-side keeps it).
func TestApplySendsOneRequestPerWrite(t *testing.T) {
	requireCluster(t)
	const first = `
apiVersion: v1
kind: ConfigMap
metadata: {name: b}
data: {k: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: c}
data: {k: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: d}
data: {k: "1"}
`
	const second = first + `---
apiVersion: v1
kind: ConfigMap
metadata: {name: a}
data: {k: "1"}
`
	for _, serverSide := range []bool{false, true} {
		t.Run(map[bool]string{false: "client-side", true: "server-side"}[serverSide], func(t *testing.T) {
			w := newWorld(t, kapplyTool, nil)
			opts := apply.Options{Write: apply.WriteOptions{Namespace: w.ns, ServerSide: serverSide}}
			failOnFailures(t, kapplyRunOpts(t, w, fileRun{writeManifest(t, w, first), opts}))
			// b changes, c and d do not, a is new: four objects of one
			// resource, which the run lists (listThreshold).
			path := writeManifest(t, w, strings.Replace(second, `metadata: {name: b}
data: {k: "1"}`, `metadata: {name: b}
data: {k: "2"}`, 1))
			requests := &configMapRequests{ns: w.ns}
			failOnFailures(t, kapplyRunOptsWith(t, w, fileRun{path, opts}, requests.wrap))
			want := []string{"GET ", "PATCH /b", "POST "}
			if serverSide {
				// a new object also gets its record shared (applyAsKubectl).
				want = []string{"GET ", "PATCH /a", "PATCH /a", "PATCH /b", "PATCH /c", "PATCH /d"}
			}
			if seen := requests.sorted(); !slices.Equal(seen, want) {
				t.Errorf("requests to configmaps: %q, want %q", seen, want)
			}
		})
	}
}
