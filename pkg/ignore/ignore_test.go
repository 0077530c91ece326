package ignore

import (
	"bytes"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kapply/kapply/pkg/fieldpath"
	"github.com/kapply/kapply/pkg/plan"
)

func obj(t *testing.T, text string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(text), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

const deployment = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web-1, namespace: prod, labels: {app: web}}
spec:
  replicas: 5
  template:
    spec:
      containers:
      - {name: web, image: web:1}
      - {name: istio-proxy, image: proxy:1}
`

var webID = plan.ID{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "prod", Name: "web-1"}

func rulesOf(t *testing.T, text string) *Rules {
	t.Helper()
	list, err := Parse("rules.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	rs := &Rules{}
	if err := rs.Add(list...); err != nil {
		t.Fatal(err)
	}
	return rs
}

const header = "apiVersion: kapply.dev/v1alpha1\nkind: IgnoreRules\nrules:\n"

func TestIgnoreStripPointerAndJQ(t *testing.T) {
	rs := rulesOf(t, header+`- group: apps
  kind: Deployment
  namespace: prod
  name: web-*
  jsonPointers: [/spec/replicas]
  jqPathExpressions: ['.spec.template.spec.containers[] | select(.name == "istio-proxy")']
- kind: Service
  jsonPointers: [/spec/clusterIP]
`)
	live := obj(t, deployment)
	got := rs.Strip(webID, nil, live, nil)
	want := obj(t, strings.Replace(strings.Replace(deployment, "  replicas: 5\n", "", 1), "      - {name: istio-proxy, image: proxy:1}\n", "", 1))
	if !reflect.DeepEqual(got[0], want) {
		t.Errorf("stripped:\n%v\nwant\n%v", got[0], want)
	}
	if got[1] != nil {
		t.Errorf("a nil side became %v", got[1])
	}
	if _, err := fieldpath.Fields("spec", "replicas").Lookup(live); err != nil {
		t.Errorf("Strip modified its input: %v", err)
	}
	if un := rs.Unmatched(); len(un) != 1 || un[0].Origin != "rules.yaml:10" {
		t.Errorf("unmatched = %v, want the Service rule at rules.yaml:10", un)
	}
}

func TestIgnoreScope(t *testing.T) {
	rs := rulesOf(t, header+`- group: ""
  kind: Deployment
  jsonPointers: [/spec/replicas]
- group: apps
  namespace: staging
  jsonPointers: [/spec/replicas]
- name: api-*
  jsonPointers: [/spec/replicas]
`)
	if got := rs.For(webID); len(got) != 0 {
		t.Errorf("rules for %s: %v, want none (core group, other namespace, other name)", webID, got)
	}
	if got := rs.For(plan.ID{Group: "apps", Kind: "Deployment", Namespace: "x", Name: "api-7"}); len(got) != 1 {
		t.Errorf("name glob api-* matched %d rules, want 1", len(got))
	}
}

// fakeManaged owns paths by manager.
type fakeManaged map[string][]fieldpath.Path

func (f fakeManaged) FieldsOf(m string) []fieldpath.Path { return f[m] }

func mustPath(t *testing.T, s string) fieldpath.Path {
	t.Helper()
	p, err := fieldpath.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestIgnoreStripManager(t *testing.T) {
	rs := rulesOf(t, header+"- managedFieldsManagers: [hpa-controller]\n")
	managed := fakeManaged{"hpa-controller": {mustPath(t, "spec.replicas"), mustPath(t, "spec.template.spec.containers[name=istio-proxy].image")}}
	got := rs.Strip(webID, managed, obj(t, deployment))[0]
	if _, err := fieldpath.Fields("spec", "replicas").Lookup(got); err == nil {
		t.Error("spec.replicas, owned by hpa-controller, kept")
	}
	proxy, err := mustPath(t, "spec.template.spec.containers[name=istio-proxy]").Lookup(got)
	if err != nil || !reflect.DeepEqual(proxy, map[string]any{"name": "istio-proxy"}) {
		t.Errorf("istio-proxy = %v, %v; want its image removed, its name kept", proxy, err)
	}
}

func TestIgnoreRespect(t *testing.T) {
	rs := rulesOf(t, header+`- kind: Deployment
  jsonPointers: [/spec/replicas, /metadata/labels/team]
  jqPathExpressions: ['.spec.template.spec.containers[] | select(.name == "istio-proxy")']
`)
	file := obj(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web-1, namespace: prod, labels: {app: web, team: a}}
spec:
  replicas: 2
  template:
    spec:
      containers:
      - {name: web, image: web:2}
`)
	got, changed, err := rs.Respect(webID, nil, file, obj(t, deployment))
	if err != nil {
		t.Fatal(err)
	}
	want := obj(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web-1, namespace: prod, labels: {app: web}}
spec:
  replicas: 5
  template:
    spec:
      containers:
      - {name: web, image: web:2}
      - {name: istio-proxy, image: proxy:1}
`)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("respected file:\n%v\nwant\n%v", got, want)
	}
	if len(changed) != 3 {
		t.Errorf("changed %v, want replicas, the proxy container, the team label", changed)
	}
}

func TestIgnoreMalformedNamesLine(t *testing.T) {
	for name, tc := range map[string]struct {
		text string
		line int
	}{
		"unknown key":    {header + "- kind: Deployment\n  jsonPointer: [/spec/replicas]\n", 5},
		"bad jq":         {header + "- kind: Deployment\n  jsonPointers: [/a]\n- kind: Service\n  jqPathExpressions: ['.spec[']\n", 7},
		"pointer line":   {header + "- kind: Deployment\n  jsonPointers:\n  - /ok\n  - spec/replicas\n", 7},
		"bad pointer":    {header + "- jsonPointers: [spec/replicas]\n", 4},
		"ignores none":   {header + "- kind: Deployment\n", 4},
		"wrong kind":     {"apiVersion: kapply.dev/v1alpha1\nkind: Rules\nrules: []\n", 2},
		"not a list":     {header + "  foo: bar\n", 4},
		"bad glob":       {header + "- name: 'web-['\n  jsonPointers: [/a]\n", 4},
		"wrong type":     {header + "- kind: [Deployment]\n  jsonPointers: [/a]\n", 4},
		"bad yaml":       {header + "- kind: Deployment\n   jsonPointers: [/a\n", 5},
		"unknown top":    {"apiVersion: kapply.dev/v1alpha1\nkind: IgnoreRules\nignoreDifferences: []\n", 3},
		"empty manager":  {header + "- managedFieldsManagers: ['']\n", 4},
		"apiVersion bad": {"apiVersion: v1\nkind: IgnoreRules\nrules: []\n", 1},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse("rules.yaml", []byte(tc.text))
			if err == nil {
				t.Fatal("no error")
			}
			var le *LineError
			prefix := "rules.yaml:" + strconv.Itoa(tc.line) + ":"
			if !errors.As(err, &le) || le.Line != tc.line || !strings.HasPrefix(err.Error(), prefix) {
				t.Errorf("error %q does not name rules.yaml line %d", err, tc.line)
			}
			if !strings.HasPrefix(err.Error(), "rules.yaml") {
				t.Errorf("error %q does not start with the file name", err)
			}
		})
	}
}

func TestIgnoreFlag(t *testing.T) {
	r, err := ParseFlag(`group=apps,kind=Deployment,name=web-*,pointer=/spec/replicas,manager=hpa,jq=.a, .b`, 1)
	if err != nil {
		t.Fatal(err)
	}
	if *r.Group != "apps" || r.Kind != "Deployment" || r.Name != "web-*" || r.JSONPointers[0] != "/spec/replicas" || r.ManagedFieldsManagers[0] != "hpa" || r.JQPathExpressions[0] != ".a, .b" {
		t.Errorf("parsed %+v", r)
	}
	if r, err := ParseFlag("group=,pointer=/a", 2); err != nil || *r.Group != "" {
		t.Errorf("group= is the core group: %+v, %v", r, err)
	}
	for _, bad := range []string{"kind=Deployment", "pointr=/a", "pointer", "jq=.[", "pointer=a"} {
		if _, err := ParseFlag(bad, 3); err == nil || !strings.Contains(err.Error(), "--ignore #3") {
			t.Errorf("%q: error %v, want one naming --ignore #3", bad, err)
		}
	}
}

// owners answers Of from a table of path texts.
type owners map[string][]string

func (o owners) Of(p fieldpath.Path) []string { return o[p.String()] }

func TestIgnoreClassify(t *testing.T) {
	live := obj(t, deployment)
	merged := obj(t, strings.Replace(deployment, "image: web:1", "image: web:2", 1))
	result := obj(t, string(mustYAML(t, merged)))
	result["metadata"].(map[string]any)["labels"].(map[string]any)["injected"] = "yes"
	web := result["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0]
	web.(map[string]any)["imagePullPolicy"] = "IfNotPresent"
	fields := Classify(Sides{
		Live: live, Merged: merged, Result: result,
		Changes: []plan.Change{
			{Path: mustPath(t, "spec.template.spec.containers[name=web].image"), Reason: plan.SetByFile},
			{Path: mustPath(t, "spec.replicas"), Reason: plan.SetByFile},
			{Path: mustPath(t, "metadata.labels.old"), Reason: plan.RemovedFromFile},
			{Path: mustPath(t, "metadata.labels.other"), Reason: plan.KeptUnmanaged},
		},
		LiveOwners:   owners{"spec.replicas": {"hpa-controller (scale)"}, "spec.template.spec.containers[name=web].image": {"kubectl-client-side-apply"}},
		ResultOwners: owners{"spec.template.spec.containers[name=web].imagePullPolicy": {"kubectl-client-side-apply"}},
		Appliers:     []string{"kubectl-client-side-apply"},
	})
	got := map[string]string{}
	for _, f := range fields {
		got[f.Path.String()] = f.String()
	}
	want := map[string]string{
		"spec.template.spec.containers[name=web].image": "set by file",
		"spec.replicas":            "other writer: hpa-controller",
		"metadata.labels.old":      "removed from file",
		"metadata.labels.injected": "server: admission",
		"spec.template.spec.containers[name=web].imagePullPolicy": "server: defaulted",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("classes:\n%v\nwant\n%v", got, want)
	}
	rule := Suggest(webID, fields)
	var buf bytes.Buffer
	if err := WriteFile(&buf, []*Rule{rule}); err != nil {
		t.Fatal(err)
	}
	back := rulesOf(t, buf.String())
	stripped := back.Strip(webID, fakeManaged{"hpa-controller": {mustPath(t, "spec.replicas")}}, live, result)
	remaining := changedLeaves(stripped[0], stripped[1])
	if len(remaining) != 1 || remaining[0].String() != "spec.template.spec.containers[name=web].image" {
		t.Errorf("after the suggested rules\n%s\nthe sides differ at %v, want only the file's image", buf.String(), remaining)
	}
}

func mustYAML(t *testing.T, v any) []byte {
	t.Helper()
	out, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestIgnoreJQOfPath(t *testing.T) {
	o := obj(t, `
metadata: {annotations: {"a.b/c": x}, finalizers: [f1, f2]}
spec: {ports: [{port: 80, protocol: TCP}, {port: 443, protocol: TCP}]}
`)
	// Classify builds paths with the values' own types (a port is a number).
	port := func(n int64) fieldpath.Path {
		return fieldpath.Fields("spec", "ports").Child(fieldpath.Key([]fieldpath.KeyValue{{Name: "port", Value: n}}))
	}
	paths := map[string]fieldpath.Path{
		"annotation": mustPath(t, `metadata.annotations["a.b/c"]`), "finalizer": mustPath(t, "metadata.finalizers[=f2]"),
		"port field": port(443).Child(fieldpath.Field("protocol")), "port": port(80),
	}
	for p, path := range paths {
		r, err := ParseFlag("jq="+JQ(path), 1)
		if err != nil {
			t.Fatalf("%s: jq %q: %v", p, JQ(path), err)
		}
		rs := &Rules{list: []*Rule{r}}
		if !rs.Ignored(plan.ID{}, nil, o, path) {
			t.Errorf("%s: jq %q does not select it", p, JQ(path))
		}
	}
	if got := Pointer(mustPath(t, `metadata.annotations["a.b/c"]`)); got != "/metadata/annotations/a.b~1c" {
		t.Errorf("pointer %q", got)
	}
}

func TestIgnoreClassifySecretStringData(t *testing.T) {
	merged := obj(t, "kind: Secret\nstringData: {password: p}\n")
	result := obj(t, "kind: Secret\ndata: {password: cA==, token: dA==}\n")
	fields := Classify(Sides{Merged: merged, Result: result, ResultOwners: owners{}, Appliers: []string{"a"}})
	if len(fields) != 1 || fields[0].Path.String() != "data.token" {
		t.Errorf("classes %v: want data.token only, not data.password nor stringData.password, which the server moves", fields)
	}
}

func TestIgnoreFilterItem(t *testing.T) {
	rs := rulesOf(t, header+"- kind: Deployment\n  jsonPointers: [/spec/replicas]\n")
	live := obj(t, deployment)
	merged := obj(t, strings.Replace(deployment, "replicas: 5", "replicas: 2", 1))
	it := plan.Item{Action: plan.Update, ID: webID, Merged: merged, Changes: []plan.Change{{Path: fieldpath.Fields("spec", "replicas"), Old: int64(5), New: int64(2)}}}
	got := rs.FilterItem(it, live, nil)
	if got.Action != plan.Unchanged || len(got.Changes) != 0 {
		t.Errorf("item with only an ignored change: %s, %v; want unchanged, no changes", got.Action, got.Changes)
	}
	if _, err := fieldpath.Fields("spec", "replicas").Lookup(got.Merged); err == nil {
		t.Error("Merged keeps the ignored field")
	}
	it.Changes = append(it.Changes, plan.Change{Path: fieldpath.Fields("metadata", "labels", "app"), New: "web"})
	if got := rs.FilterItem(it, live, nil); got.Action != plan.Update || len(got.Changes) != 1 {
		t.Errorf("item with a real change too: %s, %v; want patch with that change", got.Action, got.Changes)
	}
}

// TestPointerEscapes: ~1 stands for "/" and ~0 for "~" in a pointer's
// tokens (RFC 6901), decoded in that order: "~01" is the key "~1".
func TestPointerEscapes(t *testing.T) {
	var rs Rules
	if err := rs.Add(&Rule{Origin: "t", JSONPointers: []string{"/data/a~0b~1c", "/data/~01"}}); err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{"data": map[string]any{"a~b/c": "x", "~1": "y", "a~b~1c": "kept", "/": "kept too"}}
	got := rs.Strip(plan.ID{Version: "v1", Kind: "ConfigMap", Name: "c"}, nil, obj)[0]
	want := map[string]any{"data": map[string]any{"a~b~1c": "kept", "/": "kept too"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stripped %v, want %v", got, want)
	}
}
