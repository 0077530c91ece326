package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"

	"github.com/kapply/kapply/internal/fixture"
)

// Issue 30, item 1: a patch that sends a list whole (a custom resource's
// keyed list in a merge patch; a keyed list the file dropped, in a
// strategic merge patch) carries live's elements as the plan read them.
// A plan executed after a controller added an element must refuse the
// item rather than drop the element.

// wholeWorld is a namespace with a Widget (keyed list spec.byName), a
// Deployment whose env the files drop, and a ConfigMap, applied; the files
// then change all three.
type wholeWorld struct {
	ns, dir, group string
}

var deploymentsGVR = k8sschema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

func (w wholeWorld) widgets() k8sschema.GroupVersionResource {
	return k8sschema.GroupVersionResource{Group: w.group, Version: "v1", Resource: "widgets"}
}

func envDeployment(container string) string {
	return `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: registry.k8s.io/pause:3.10, ` + container + `}]}
`
}

func newWholeWorld(t *testing.T) wholeWorld {
	t.Helper()
	w := wholeWorld{ns: cluster.Namespace(t), group: strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")) + ".kapply.test"}
	mustRunKapply(t, "apply", "-f", writeFiles(t, map[string]string{"crd.yaml": fixture.WidgetCRD(w.group)}))
	t.Cleanup(func() { kapply(t, "delete", "crd", "widgets."+w.group) })
	awaitListMapKeys(t, w.group)
	w.dir = writeFiles(t, map[string]string{
		"w.yaml":  fixture.Widget(w.group, "", "w", "byName: [{name: a, value: a1}]"),
		"d.yaml":  envDeployment(`env: [{name: A, value: "1"}]`),
		"cm.yaml": configMapYAML("cm", "k", "1"),
	})
	mustRunKapply(t, "apply", "-f", w.dir, "-n", w.ns)
	writeFile(t, w.dir, "w.yaml", fixture.Widget(w.group, "", "w", "byName: [{name: a, value: a2}]"))
	writeFile(t, w.dir, "d.yaml", envDeployment("args: [--x]"))
	writeFile(t, w.dir, "cm.yaml", configMapYAML("cm", "k", "2"))
	return w
}

// awaitListMapKeys waits until the server publishes the Widget's schema
// with its list keys: planned before, the list is one value.
func awaitListMapKeys(t *testing.T, group string) {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		body, err := dc.RESTClient().Get().AbsPath("/openapi/v3/apis/" + group + "/v1").DoRaw(ctx)
		return err == nil && strings.Contains(string(body), "x-kubernetes-list-map-keys"), nil
	})
	if err != nil {
		t.Fatalf("waiting for the OpenAPI document of %s: %v", group, err)
	}
}

// controllerAdds is a controller's writes: a rule ctrl appended to the
// Widget's keyed list, an environment variable CTRL to the Deployment.
func (w wholeWorld) controllerAdds(t *testing.T) {
	t.Helper()
	ctx, opts := context.Background(), metav1.PatchOptions{FieldManager: "controller"}
	rule := `[{"op":"add","path":"/spec/byName/-","value":{"name":"ctrl","value":"c1"}}]`
	if _, err := dynamicClient(t).Resource(w.widgets()).Namespace(w.ns).Patch(ctx, "w", types.JSONPatchType, []byte(rule), opts); err != nil {
		t.Fatalf("the controller adding a rule: %v", err)
	}
	env := `{"spec":{"template":{"spec":{"containers":[{"name":"web","env":[{"name":"CTRL","value":"c"}]}]}}}}`
	if _, err := dynamicClient(t).Resource(deploymentsGVR).Namespace(w.ns).Patch(ctx, "web", types.StrategicMergePatchType, []byte(env), opts); err != nil {
		t.Fatalf("the controller adding an environment variable: %v", err)
	}
}

// byName is the Widget's list, name → value.
func (w wholeWorld) byName(t *testing.T) string {
	t.Helper()
	live, err := dynamicClient(t).Resource(w.widgets()).Namespace(w.ns).Get(context.Background(), "w", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	list, _, _ := unstructured.NestedSlice(live.Object, "spec", "byName")
	got := map[string]any{}
	for _, e := range list {
		if e, ok := e.(map[string]any); ok {
			got[fmt.Sprint(e["name"])] = e["value"]
		}
	}
	out, _ := json.Marshal(got)
	return string(out)
}

// env is the Deployment's container's env.
func (w wholeWorld) env(t *testing.T) string {
	t.Helper()
	live, err := dynamicClient(t).Resource(deploymentsGVR).Namespace(w.ns).Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	containers, _, _ := unstructured.NestedSlice(live.Object, "spec", "template", "spec", "containers")
	out, _ := json.Marshal(containers[0].(map[string]any)["env"])
	return string(out)
}

// assertRefusedKeepingTheController checks a run that executed the plan
// after the controller's writes: the Widget and the Deployment refused,
// naming the lists, the controller's elements kept; the ConfigMap written.
func (w wholeWorld) assertRefusedKeepingTheController(t *testing.T, r result) {
	t.Helper()
	if r.code != exitFailed {
		t.Errorf("exit %d, want %d", r.code, exitFailed)
	}
	for _, want := range []string{
		"Widget." + w.group + "/w -n " + w.ns + " changed since the plan: spec.byName",
		"Deployment.apps/web -n " + w.ns + " changed since the plan: spec.template.spec.containers[name=web].env",
		// The diff of what changed shows the list as planned and now.
		" spec.byName:\n   - name: a\n     value: a1\n+  - name: ctrl\n+    value: c1\n",
		"+  - name: CTRL\n",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if !strings.Contains(r.stdout, "configmap/cm configured") {
		t.Errorf("stdout lacks the ConfigMap configured:\n%s", r.stdout)
	}
	if got := w.byName(t); got != `{"a":"a1","ctrl":"c1"}` {
		t.Errorf("the Widget's list %s, want the controller's rule kept and a as it was", got)
	}
	// The server puts an element a strategic merge patch adds first.
	if got := w.env(t); got != `[{"name":"CTRL","value":"c"},{"name":"A","value":"1"}]` {
		t.Errorf("the Deployment's env %s, want the controller's variable kept", got)
	}
	if got := configMapData(t, w.ns, "cm")["k"]; got != "2" {
		t.Errorf("cm's k = %v, want the plan's 2", got)
	}
}

// TestApplyPlanRefusesAnElementAddedToAListSentWhole: kapply plan -o,
// the controller's writes, then apply --plan.
func TestApplyPlanRefusesAnElementAddedToAListSentWhole(t *testing.T) {
	w := newWholeWorld(t)
	planFile := filepath.Join(t.TempDir(), "plan.json")
	mustRunKapply(t, "plan", "-f", w.dir, "-n", w.ns, "-o", planFile)
	w.controllerAdds(t)
	w.assertRefusedKeepingTheController(t, kapply(t, "apply", "--plan", planFile, "-f", w.dir, "-n", w.ns))
}

// TestConfirmRefusesAnElementAddedToAListSentWhole: apply -i, the
// controller's writes while the question waits, then "y".
func TestConfirmRefusesAnElementAddedToAListSentWhole(t *testing.T) {
	w := newWholeWorld(t)
	w.assertRefusedKeepingTheController(t, kapplyOnTerminal(t, "y", func() { w.controllerAdds(t) }, "apply", "-i", "-f", w.dir, "-n", w.ns))
}

// TestApplyKeepsAnElementAddedToAKeyedList: plain apply after the
// controller's writes plans again: the Widget's list merges by key, the
// controller's rule stays beside the file's change.
func TestApplyKeepsAnElementAddedToAKeyedList(t *testing.T) {
	w := newWholeWorld(t)
	w.controllerAdds(t)
	mustRunKapply(t, "apply", "-f", w.dir, "-n", w.ns)
	if got := w.byName(t); got != `{"a":"a2","ctrl":"c1"}` {
		t.Errorf("the Widget's list %s, want the file's a2 and the controller's rule", got)
	}
}
