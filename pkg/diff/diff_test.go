package diff

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kapply/kapply/pkg/fieldpath"
	"sigs.k8s.io/yaml"

	"github.com/kapply/kapply/pkg/merge"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/diff")

// golden compares got with testdata/diff/NAME, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("..", "..", "testdata", "diff", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with -update to create it): %v", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run with -update to accept):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func obj(t *testing.T, text string) map[string]any {
	t.Helper()
	if text == "" {
		return nil
	}
	var m map[string]any
	if err := yaml.Unmarshal([]byte(text), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// fixedOwners owns every path by the manager given for its string form.
type fixedOwners map[string][]string

func (f fixedOwners) Of(p fieldpath.Path) []string { return f[p.String()] }

const liveDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  resourceVersion: "41"
  generation: 3
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"spec":{"replicas":2}}'
    team: a
  managedFields: [{manager: kapply, operation: Update}]
spec:
  replicas: 3
  template:
    spec:
      containers:
      - {name: web, image: "nginx:1.27"}
      - {name: log, image: "busybox", args: ["tail"]}
`

const afterDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  resourceVersion: "42"
  generation: 4
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"spec":{"replicas":2,"x":1}}'
    team: a
  managedFields: [{manager: kapply, operation: Update}, {manager: x}]
spec:
  replicas: 2
  template:
    spec:
      containers:
      - {name: web, image: "nginx:1.28"}
      - {name: log, image: "busybox", args: ["tail"]}
`

func deploymentObject(t *testing.T) Object {
	t.Helper()
	return Object{
		Name: "apps.v1.Deployment.shop.web", Ref: "deployment.apps/web -n shop", Source: "manifests/web.yaml",
		Live: obj(t, liveDeployment), After: obj(t, afterDeployment),
		Changes: []merge.Change{
			{Path: fieldpath.Fields("metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration"), Old: "a", New: "b"},
			{Path: fieldpath.Fields("spec", "replicas"), Old: int64(3), New: int64(2), Reason: merge.SetByFile},
			{Path: fieldpath.Fields("spec", "paused"), Old: true, Reason: merge.RemovedFromFile},
			{Path: fieldpath.Fields("status"), Old: map[string]any{}, New: map[string]any{}, Reason: merge.KeptUnmanaged},
		},
		Owners: fixedOwners{"spec.replicas": {"kubectl-scale"}, "spec.paused": {"kapply", "kubectl-edit"}},
	}
}

const liveSecret = `apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: shop}
data: {password: b25l, user: YWRtaW4=, old: eA==}
`

const afterSecret = `apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: shop}
data: {password: dHdv, user: YWRtaW4=}
stringData: {token: s3cr3t-t0ken}
`

func secretObject(t *testing.T) Object {
	t.Helper()
	return Object{
		Name: "v1.Secret.shop.creds", Ref: "secret/creds -n shop", Source: "manifests/creds.yaml",
		Live: obj(t, liveSecret), After: obj(t, afterSecret),
		Changes: []merge.Change{
			{Path: fieldpath.Fields("data", "password"), Old: "b25l", New: "dHdv", Reason: merge.SetByFile},
			{Path: fieldpath.Fields("data", "old"), Old: "eA==", Reason: merge.RemovedFromFile},
			{Path: fieldpath.Fields("stringData", "token"), New: "s3cr3t-t0ken", Reason: merge.SetByFile},
		},
	}
}

func newObject(t *testing.T) Object {
	t.Helper()
	return Object{Name: "v1.ConfigMap.shop.new", Ref: "configmap/new -n shop", Source: "manifests/new.yaml",
		After: obj(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: new, namespace: shop}\ndata: {k: v}\n")}
}

func sameObject(t *testing.T) Object {
	t.Helper()
	cm := obj(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: same, namespace: shop, resourceVersion: '1'}\n")
	after := obj(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: same, namespace: shop, resourceVersion: '2'}\n")
	return Object{Name: "v1.ConfigMap.shop.same", Ref: "configmap/same -n shop", Source: "manifests/same.yaml", Live: cm, After: after}
}

// render compares every object and prints them with p.
func render(t *testing.T, p Printer, objs ...Object) string {
	t.Helper()
	var comparisons []Comparison
	for _, o := range objs {
		c, err := Compare(o, p.Options)
		if err != nil {
			t.Fatal(err)
		}
		comparisons = append(comparisons, c)
	}
	var out bytes.Buffer
	if err := p.Print(&out, comparisons); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestRenderGolden(t *testing.T) {
	cases := []struct {
		golden  string
		printer Printer
	}{
		{"render-unified.golden", Printer{}},
		{"render-color.golden", Printer{Options: Options{Color: true}}},
		{"render-explain.golden", Printer{Options: Options{Explain: true}}},
		{"render-summary.golden", Printer{Summary: true}},
		{"render-show-managed.golden", Printer{Options: Options{ShowManaged: true, Explain: true}}},
	}
	for _, tc := range cases {
		t.Run(tc.golden, func(t *testing.T) {
			got := render(t, tc.printer, deploymentObject(t), secretObject(t), newObject(t), sameObject(t))
			golden(t, tc.golden, got)
		})
	}
}

// TestSecretValuesNeverShown: no value of the Secret, plain or encoded,
// appears in any output without ShowSecrets; with it, they do.
func TestSecretValuesNeverShown(t *testing.T) {
	values := []string{"b25l", "dHdv", "YWRtaW4=", "eA==", "s3cr3t-t0ken", "czNjcjN0LXQwa2Vu"}
	for _, p := range []Printer{{}, {Summary: true}, {Options: Options{Explain: true, ShowManaged: true}}} {
		out := render(t, p, secretObject(t))
		for _, v := range values {
			if strings.Contains(out, v) {
				t.Errorf("%+v: output shows secret value %q:\n%s", p, v, out)
			}
		}
	}
	golden(t, "render-secret.golden", render(t, Printer{Options: Options{Explain: true}}, secretObject(t)))
	shown := render(t, Printer{Options: Options{ShowSecrets: true, Explain: true}}, secretObject(t))
	for _, v := range []string{"dHdv", "czNjcjN0LXQwa2Vu", "s3cr3t-t0ken"} {
		if !strings.Contains(shown, v) {
			t.Errorf("ShowSecrets: %q not shown:\n%s", v, shown)
		}
	}
}

func TestMaskSecretMarksChanges(t *testing.T) {
	live := map[string]any{"data": map[string]any{"same": "a", "changed": "b", "gone": "c"}}
	after := map[string]any{"data": map[string]any{"same": "a", "changed": "B", "new": "d"}}
	gotLive, gotAfter := maskSecret(live, after)
	wantLive := map[string]any{"same": maskSame, "changed": maskBefore, "gone": maskSame}
	wantAfter := map[string]any{"same": maskSame, "changed": maskAfter, "new": maskSame}
	if s := yamlOf(t, gotLive["data"]); s != yamlOf(t, wantLive) {
		t.Errorf("live masked as %s", s)
	}
	if s := yamlOf(t, gotAfter["data"]); s != yamlOf(t, wantAfter) {
		t.Errorf("after masked as %s", s)
	}
	if live["data"].(map[string]any)["changed"] != "b" {
		t.Error("maskSecret modified its input")
	}
}

func yamlOf(t *testing.T, v any) string {
	t.Helper()
	out, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestCompareOutcomes(t *testing.T) {
	cases := map[string]struct {
		obj    Object
		want   Outcome
		fields int
	}{
		"changed":               {deploymentObject(t), Changed, 2},
		"created":               {newObject(t), Created, 4},
		"only noise differs":    {sameObject(t), Unchanged, 0},
		"secret via stringData": {Object{Ref: "secret/s", Live: obj(t, liveSecret), After: foldedSecret(t)}, Unchanged, 0},
		// Values the engine's equality (fieldpath.Equal) holds the same are
		// unchanged for diff too, whatever their YAML: an empty map and a
		// nil one render as {} and null.
		"empty and nil map": {Object{Ref: "configmap/c", Live: map[string]any{"data": map[string]any{}}, After: map[string]any{"data": map[string]any(nil)}}, Unchanged, 0},
		"int and float":     {Object{Ref: "configmap/c", Live: map[string]any{"n": int64(1000000)}, After: map[string]any{"n": float64(1e6)}}, Unchanged, 0},
		"number changed":    {Object{Ref: "configmap/c", Live: map[string]any{"n": int64(1000000)}, After: map[string]any{"n": float64(1.5e6)}}, Changed, 1},
	}
	for name, tc := range cases {
		c, err := Compare(tc.obj, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if c.Outcome != tc.want || c.Fields != tc.fields {
			t.Errorf("%s: outcome %s with %d fields, want %s with %d", name, c.Outcome.Symbol(), c.Fields, tc.want.Symbol(), tc.fields)
		}
	}
}

// foldedSecret is liveSecret as a client dry run computes it from a file
// that sets its values through stringData.
func foldedSecret(t *testing.T) map[string]any {
	t.Helper()
	return obj(t, `apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: shop}
data: {old: eA==, password: b25l}
stringData: {user: admin}
`)
}

func TestUseColor(t *testing.T) {
	var buf bytes.Buffer
	cases := []struct {
		mode, noColor string
		want          bool
	}{
		{"always", "1", true}, {"never", "", false}, {"auto", "", false}, {"", "", false},
	}
	for _, tc := range cases {
		got, err := UseColor(tc.mode, &buf, tc.noColor)
		if err != nil || got != tc.want {
			t.Errorf("UseColor(%q, buffer, NO_COLOR=%q) = %v, %v; want %v", tc.mode, tc.noColor, got, err, tc.want)
		}
	}
	if _, err := UseColor("sometimes", &buf, ""); err == nil {
		t.Error("UseColor accepted a bad mode")
	}
}

// TestExternal runs a shell program on the two directories: it sees
// kubectl's file names, and its exit status decides the result.
func TestExternal(t *testing.T) {
	comparisons := []Comparison{mustCompare(t, deploymentObject(t)), mustCompare(t, newObject(t))}
	cases := []struct {
		script  string
		differ  bool
		wantErr bool
	}{
		{`ls "$1" "$2"; exit 1`, true, false},
		{`exit 0`, false, false},
		{`exit 3`, false, true},
	}
	for _, tc := range cases {
		var out, errOut bytes.Buffer
		program := writeScript(t, tc.script)
		differ, err := External(context.Background(), program, comparisons, &out, &errOut)
		if differ != tc.differ || (err != nil) != tc.wantErr {
			t.Errorf("%q: differ %v, err %v", tc.script, differ, err)
		}
		if tc.differ && !strings.Contains(out.String(), "apps.v1.Deployment.shop.web") {
			t.Errorf("%q: the program did not see the object's file:\n%s", tc.script, out.String())
		}
	}
}

func mustCompare(t *testing.T, o Object) Comparison {
	t.Helper()
	c, err := Compare(o, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func writeScript(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "differ")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// An unchanged object is decided by value and not rendered, unless every
// side is wanted (an external program); a changed one always is.
func TestCompareRendersOnlyWhatDiffers(t *testing.T) {
	obj := func(v string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}, "data": map[string]any{"k": v}}
	}
	same, err := Compare(Object{Ref: "configmap/c", Live: obj("a"), After: obj("a")}, Options{})
	if err != nil || same.Outcome != Unchanged || same.Live != "" || same.After != "" {
		t.Errorf("unchanged: outcome %v, live %q, after %q, err %v; want Unchanged and nothing rendered", same.Outcome, same.Live, same.After, err)
	}
	all, err := Compare(Object{Ref: "configmap/c", Live: obj("a"), After: obj("a")}, Options{AllSides: true})
	want := "apiVersion: v1\ndata:\n  k: a\nkind: ConfigMap\nmetadata:\n  name: c\n"
	if err != nil || all.Outcome != Unchanged || all.Live != want || all.After != want {
		t.Errorf("unchanged, AllSides: outcome %v, live %q, after %q, err %v; want both sides %q", all.Outcome, all.Live, all.After, err, want)
	}
	changed, err := Compare(Object{Ref: "configmap/c", Live: obj("a"), After: obj("b")}, Options{})
	if err != nil || changed.Outcome != Changed || changed.Live != want || !strings.Contains(changed.After, "k: b\n") {
		t.Errorf("changed: outcome %v, live %q, after %q, err %v", changed.Outcome, changed.Live, changed.After, err)
	}
}
