package plan

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapply/kapply/pkg/lastapplied"
)

// liveDeployment is deploymentItem's live object as it is now, changed by
// edit.
func liveDeployment(t *testing.T, edit func(u *unstructured.Unstructured)) *unstructured.Unstructured {
	u := obj(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"prod","uid":"u-1","resourceVersion":"41",
		"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"spec\":{\"replicas\":2,\"paused\":true}}"}},
		"spec":{"replicas":2,"paused":true,"template":{"spec":{"containers":[{"name":"web","image":"nginx:1","ports":[{"containerPort":80}]}]}}},
		"status":{"readyReplicas":2}}`)
	if edit != nil {
		edit(u)
	}
	return u
}

func set(path []string, v any) func(u *unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		if err := unstructured.SetNestedField(u.Object, v, path...); err != nil {
			panic(err)
		}
		u.SetResourceVersion("50")
	}
}

func TestVerifyPatchItem(t *testing.T) {
	// Verified after a round trip, as apply --plan does.
	p, err := Decode(bytes.NewReader(encode(t, &Plan{Cluster: Cluster{Server: "s"}, Items: []Item{deploymentItem(t)}})))
	if err != nil {
		t.Fatal(err)
	}
	it := p.Items[0]
	cases := []struct {
		name    string
		live    *unstructured.Unstructured
		wantRV  string
		refused string
	}{
		{"nothing moved", liveDeployment(t, nil), "41", ""},
		{"status moved", liveDeployment(t, set([]string{"status", "readyReplicas"}, int64(0))), "50", ""},
		{"a field the plan does not touch", liveDeployment(t, set([]string{"metadata", "labels"}, map[string]any{"team": "a"})), "50", ""},
		{"a field the plan writes", liveDeployment(t, set([]string{"spec", "replicas"}, int64(5))), "", "changed since the plan: spec.replicas"},
		{"a list the plan replaces (no schema: atomic)", liveDeployment(t, func(u *unstructured.Unstructured) {
			containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
			containers[0].(map[string]any)["image"] = "nginx:9"
			set([]string{"spec", "template", "spec", "containers"}, containers)(u)
		}), "", "changed since the plan: spec.template.spec.containers"},
		{"the record the plan read", liveDeployment(t, set([]string{"metadata", "annotations", lastapplied.Annotation}, `{"spec":{"replicas":2}}`)),
			"", `metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"]`},
		{"deleted", nil, "", "it was deleted"},
		{"deleted and created again", liveDeployment(t, func(u *unstructured.Unstructured) { u.SetUID("u-7") }), "", "created again (UID u-7, the plan's u-1)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rv, err := it.Verify(c.live)
			switch {
			case c.refused == "" && (err != nil || rv != c.wantRV):
				t.Errorf("got %q, %v; want %q", rv, err, c.wantRV)
			case c.refused != "" && (!errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), c.refused) || rv != ""):
				t.Errorf("got %q, %v; want a refusal saying %q", rv, err, c.refused)
			}
		})
	}
}

func TestVerifyCreatePruneDelete(t *testing.T) {
	p := samplePlan(t)
	create, del := p.Items[1], p.Items[2]
	if rv, err := create.Verify(nil); err != nil || rv != "" {
		t.Errorf("create of an absent object: %q %v", rv, err)
	}
	exists := obj(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg","namespace":"prod","uid":"u-8","resourceVersion":"1"}}`)
	if _, err := create.Verify(exists); !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), "created since") {
		t.Errorf("create of an object that exists now: %v", err)
	}
	same := obj(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"old","namespace":"prod","uid":"u-2","resourceVersion":"7"}}`)
	if rv, err := del.Verify(same); err != nil || rv != "7" {
		t.Errorf("delete of the planned object: %q %v", rv, err)
	}
	moved := same.DeepCopy()
	moved.SetResourceVersion("8")
	if _, err := del.Verify(moved); !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), "resourceVersion 8, the plan's 7") {
		t.Errorf("delete of a changed object: %v", err)
	}
	if _, err := del.Verify(nil); !errors.Is(err, ErrChanged) {
		t.Errorf("delete of a deleted object: %v", err)
	}
	ssa := Item{Action: Apply, ID: IDOf(same), UID: "u-2", ResourceVersion: "7", Patch: Patch{Type: ApplyPatch, Data: []byte(`{}`)}}
	if _, err := ssa.Verify(moved); !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), "records no changes") {
		t.Errorf("a server-side apply without changes, moved: %v", err)
	}
	if rv, err := ssa.Verify(same); err != nil || rv != "7" {
		t.Errorf("a server-side apply, unmoved: %q %v", rv, err)
	}
}

// TestVerifySecretComparesDigests: a Secret's planned values are digests;
// a moved value is refused, an unmoved one is not, and the error names the
// key without the value.
func TestVerifySecretComparesDigests(t *testing.T) {
	p, _ := secretPlan(t)
	decoded, err := decodeKeyed(bytes.NewReader(encode(t, p)))
	if err != nil {
		t.Fatal(err)
	}
	_, live, _ := secretObjects(t)
	statusOnly := live.DeepCopy()
	statusOnly.SetResourceVersion("4")
	statusOnly.SetLabels(map[string]string{"x": "y"})
	if rv, err := decoded.Items[0].Verify(statusOnly); err != nil || rv != "4" {
		t.Errorf("untouched values: %q %v", rv, err)
	}
	moved := statusOnly.DeepCopy()
	moved.Object["data"].(map[string]any)["html"] = b64("rotated-value-Pp1")
	_, err = decoded.Items[0].Verify(moved)
	if !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), "data.html") || strings.Contains(err.Error(), "rotated") {
		t.Errorf("a value the plan writes moved: %v", err)
	}
}

func TestWithResourceVersion(t *testing.T) {
	cases := []struct {
		patch Patch
		want  string
	}{
		{Patch{Type: MergePatch, Data: []byte(`{"spec":{"a":1}}`)}, `{"metadata":{"resourceVersion":"9"},"spec":{"a":1}}`},
		{Patch{Type: StrategicPatch, Data: []byte(`{"metadata":{"resourceVersion":"3","labels":{"a":"b"}}}`)}, `{"metadata":{"labels":{"a":"b"},"resourceVersion":"9"}}`},
		{Patch{Type: JSONPatch, Data: []byte(`[{"op":"remove","path":"/spec/a"}]`)}, `[{"op":"test","path":"/metadata/resourceVersion","value":"9"},{"op":"remove","path":"/spec/a"}]`},
	}
	for _, c := range cases {
		got, err := c.patch.WithResourceVersion("9")
		if err != nil || string(got.Data) != c.want || got.Type != c.patch.Type {
			t.Errorf("%s: got %s %v, want %s", c.patch.Data, got.Data, err, c.want)
		}
	}
	if _, err := (Patch{Type: MergePatch, Data: []byte(`{"metadata":"x"}`)}).WithResourceVersion("9"); err == nil {
		t.Error("a patch whose metadata is not an object must be refused")
	}
}

// TestVerifyFindsKeyedElementsAfterARoundTrip: a change's path selects a
// keyed-list element by typed key values, which survive the document.
func TestVerifyFindsKeyedElementsAfterARoundTrip(t *testing.T) {
	p := samplePlan(t)
	svc := p.Items[5]
	svc.Action, svc.Patch = Update, Patch{Type: StrategicPatch, Data: []byte(`{}`)}
	svc.Changes = svc.Changes[:1] // spec.ports[port=80,protocol=TCP].name: (none) -> http
	p.Items = []Item{svc}
	decoded, err := decodeKeyed(bytes.NewReader(encode(t, p)))
	if err != nil {
		t.Fatal(err)
	}
	live := obj(t, `{"apiVersion":"v1","kind":"Service","metadata":{"name":"gone","namespace":"prod","uid":"u-4","resourceVersion":"10"},
		"spec":{"ports":[{"port":443,"protocol":"TCP","name":"https"},{"port":80,"protocol":"TCP"}]}}`)
	if _, err := decoded.Items[0].Verify(live); err != nil {
		t.Errorf("the element still lacks the name: %v", err)
	}
	named := live.DeepCopy()
	named.Object["spec"].(map[string]any)["ports"].([]any)[1].(map[string]any)["name"] = "web"
	if _, err := decoded.Items[0].Verify(named); err == nil || !strings.Contains(err.Error(), "spec.ports[port=80,protocol=TCP].name") {
		t.Errorf("another writer named the element: %v", err)
	}
}

// TestItemLabels: the labels an item's write sets, from its merged object
// or a server-side apply body; none for a removal.
func TestItemLabels(t *testing.T) {
	merged := Item{Action: Update, Merged: map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}}}}
	body := Item{Action: Apply, Patch: Patch{Type: ApplyPatch, Data: []byte(`{"metadata":{"labels":{"app":"api"}}}`)}}
	removal := Item{Action: Prune, Merged: merged.Merged}
	if got := merged.Labels()["app"]; got != "web" {
		t.Errorf("merged: %q", got)
	}
	if got := body.Labels()["app"]; got != "api" {
		t.Errorf("apply body: %q", got)
	}
	if got := removal.Labels(); got != nil {
		t.Errorf("removal: %v", got)
	}
}
