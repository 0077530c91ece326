package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/kapply/kapply/internal/fixture"
	"github.com/kapply/kapply/internal/testcluster"
	"github.com/kapply/kapply/pkg/lastapplied"
)

// packedMembers is a compact record's text: one gzip member per part,
// concatenated (gzip readers read on across members), base64-encoded.
// Equal parts are compressed once: bombs stay cheap to make under -race.
func packedMembers(t *testing.T, parts ...string) string {
	t.Helper()
	compressed := map[string][]byte{}
	var out bytes.Buffer
	for _, part := range parts {
		member, done := compressed[part]
		if !done {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			if _, err := zw.Write([]byte(part)); err != nil {
				t.Fatal(err)
			}
			if err := zw.Close(); err != nil {
				t.Fatal(err)
			}
			member = buf.Bytes()
			compressed[part] = member
		}
		out.Write(member)
	}
	return base64.StdEncoding.EncodeToString(out.Bytes())
}

// mibsOf is n MiB of chunk, a MiB a part, for packedMembers.
func mibsOf(chunk string, n int) []string {
	return slices.Repeat([]string{strings.Repeat(chunk, (1<<20)/len(chunk))}, n)
}

// hostileShapes are compact records other than `[{},{},…]`, by object
// name, with what the warning about each says: nesting 4 million deep, an
// 8 MiB string (each eight times the bound of a small object), 70,000
// keys, 10 gzip members of 1 MiB, a valid member followed by garbage,
// 190 KiB of random bytes (an annotation near the limit), plain JSON
// nested 100,000 deep.
func hostileShapes(t *testing.T) map[string][2]string {
	t.Helper()
	keys := make([]string, 70000)
	for i := range keys {
		keys[i] = fmt.Sprintf(`"a%d":0`, i)
	}
	random := make([]byte, 190<<10)
	if _, err := rand.Read(random); err != nil {
		t.Fatal(err)
	}
	valid := packedMembers(t, `{"data":{"a":"1"}}`)
	zipped, err := base64.StdEncoding.DecodeString(valid)
	if err != nil {
		t.Fatal(err)
	}
	return map[string][2]string{
		"deep":     {packedMembers(t, slices.Concat([]string{`{"a":`}, mibsOf("[", 4), mibsOf("]", 4), []string{"}"})...), "it unpacks to more than 1048576 bytes"},
		"string":   {packedMembers(t, slices.Concat([]string{`{"a":"`}, mibsOf("a", 8), []string{`"}`})...), "it unpacks to more than 1048576 bytes"},
		"keys":     {packedMembers(t, "{"+strings.Join(keys, ",")+"}"), "it holds more than 65536 JSON values"},
		"members":  {packedMembers(t, mibsOf("[", 10)...), "it unpacks to more than 1048576 bytes"},
		"trailing": {base64.StdEncoding.EncodeToString(append(zipped, "garbage!"...)), "unpacking it: unexpected EOF"},
		"random":   {base64.StdEncoding.EncodeToString(random), "unpacking it: gzip: invalid header"},
		"plain":    {`{"a":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`, "it holds more than 65536 JSON values"},
	}
}

// TestHostileCompactRecordsInEveryCommand: ConfigMaps (keys a, b; files
// set a only) carrying hostile compact records, through every command that
// reads records. None panics or hangs; each names the object: diff (with
// --explain, --local) and apply (with --prune -l) warn and treat the
// record as absent (b kept); status, release and last-applied view, edit
// and set refuse it, exit 2 (edit 1, as its failed writes), view and set
// naming the object in one error line (view named none, and printed the
// cause of "unpacking it" as a second error; set told to create the record
// the object has); adopt skips it, export drops it, delete deletes.
func TestHostileCompactRecordsInEveryCommand(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	shapes := hostileShapes(t)
	files := map[string]string{}
	for name, shape := range shapes {
		createWithRecord(t, ns, name, map[string]any{lastapplied.CompactAnnotation: shape[0]})
		files[name+".yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", labels: {app: hostile}}\ndata: {a: changed}\n"
	}
	dir := writeFiles(t, files)
	t.Setenv("KUBE_EDITOR", "true")
	warned := func(r result, name string) bool {
		return strings.Contains(r.stderr, "Warning: configmap/"+name+" -n "+ns+": the compact last-applied record ("+lastapplied.CompactAnnotation+") cannot be read: "+shapes[name][1]) &&
			strings.Contains(r.stderr, "treating it as absent")
	}
	for _, c := range []struct {
		args []string
		code int
		warn bool
	}{
		{[]string{"diff"}, exitDifferences, true},
		{[]string{"diff", "--explain"}, exitDifferences, true},
		{[]string{"diff", "--local"}, exitDifferences, true},
		{[]string{"apply", "--dry-run=client", "--prune", "-l", "app=hostile"}, exitOK, true},
		{[]string{"apply", "--dry-run=server"}, exitOK, true},
		{[]string{"status"}, exitError, false},
		{[]string{"release", "--field", "data.a", "--dry-run=client"}, exitError, false},
		{[]string{"last-applied", "view"}, exitError, false},
		{[]string{"last-applied", "edit"}, exitFailed, false},
		{[]string{"last-applied", "set"}, exitError, false},
		{[]string{"adopt", "--dry-run=client"}, exitOK, false},
		{[]string{"delete", "--dry-run=client"}, exitOK, false},
	} {
		start := time.Now()
		r := kapply(t, append(c.args, "-f", dir, "-n", ns)...)
		took := time.Since(start)
		line := strings.Join(c.args, " ")
		if r.code != c.code || strings.Contains(r.stderr, "panic") || took > 30*time.Second {
			t.Errorf("%s: exit %d in %v, want %d\nstderr:\n%.2000s", line, r.code, took, c.code, r.stderr)
		}
		for name := range shapes {
			if c.warn && !warned(r, name) {
				t.Errorf("%s: no warning about %s (%q)\nstderr:\n%.3000s", line, name, shapes[name][1], r.stderr)
			}
		}
		if !c.warn && c.code != exitOK && (!strings.Contains(r.stderr, "error: configmap/") || !strings.Contains(r.stderr, lastapplied.CompactAnnotation+") cannot be read")) {
			t.Errorf("%s: the error names no object, or not the record\nstderr:\n%.2000s", line, r.stderr)
		}
		if strings.Contains(r.stderr, "--create-annotation") {
			t.Errorf("%s: tells to create a record the object has:\n%.2000s", line, r.stderr)
		}
	}
	// One object, one line: the object named, the cause kept.
	for _, args := range [][]string{{"configmap/trailing"}, {"-f", filepath.Join(dir, "trailing.yaml")}} {
		r := kapply(t, append([]string{"last-applied", "view", "-n", ns}, args...)...)
		want := "error: configmap/trailing -n " + ns
		if r.code != exitError || !strings.HasPrefix(r.stderr, want) || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, shapes["trailing"][1]) {
			t.Errorf("view %v: exit %d, stderr %q; want one line starting %q, saying %q", args, r.code, r.stderr, want, shapes["trailing"][1])
		}
	}
	if r := kapply(t, "export", "configmap/deep", "-n", ns); r.code != 0 || strings.Contains(r.stdout, lastapplied.CompactAnnotation) {
		t.Errorf("export: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	r := kapply(t, "apply", "-f", dir, "-n", ns)
	if r.code != 0 || strings.Count(r.stdout, " configured\n") != len(shapes) {
		t.Errorf("apply: exit %d\n%s\n%.3000s", r.code, r.stdout, r.stderr)
	}
	cms := dynClient(t).Resource(configMaps).Namespace(ns)
	for name := range shapes {
		if !warned(r, name) {
			t.Errorf("apply: no warning about %s\n%.3000s", name, r.stderr)
		}
		assertData(t, cms, name, map[string]any{"a": "changed", "b": "2"})
		live, err := cms.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, left := live.GetAnnotations()[lastapplied.CompactAnnotation]; left || live.GetAnnotations()[lastapplied.Annotation] == "" {
			t.Errorf("%s: after apply, compact record left %v, kubectl record %q", name, left, live.GetAnnotations()[lastapplied.Annotation])
		}
	}
}

// TestHostileRecordsInParallel: 32 objects, each carrying a compact record
// of one of the hostile shapes or of the most a small object's record may
// hold and still be read (21,000 keys each holding {}, 65,000 values),
// applied by the kapply binary with --parallel 32: the peak RSS stays under
// 300 MiB, in reasonable time, and every object is applied.
func TestHostileRecordsInParallel(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	var records []string
	for _, shape := range hostileShapes(t) {
		records = append(records, shape[0])
	}
	keys := make([]string, 21600)
	for i := range keys {
		keys[i] = fmt.Sprintf(`"k%d":{}`, i)
	}
	records = append(records, packedMembers(t, "{"+strings.Join(keys, ",")+"}"), bombRecord(t))
	files := map[string]string{}
	const objects = 32
	for i := range objects {
		name := fmt.Sprintf("hostile-%02d", i)
		createWithRecord(t, ns, name, map[string]any{lastapplied.CompactAnnotation: records[i%len(records)]})
		files[name+".yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\ndata: {a: changed}\n"
	}
	dir := writeFiles(t, files)
	bin := builtKapply(t)
	start := time.Now()
	run := runMeasured(t, maxBombRSS, bin, "apply", "-f", dir, "-n", ns, "--parallel", "32", "--kubeconfig", cluster.Kubeconfig)
	took := time.Since(start)
	t.Logf("%d objects: %v, peak RSS %d MiB", objects, took.Round(time.Millisecond), run.peakRSS>>20)
	if run.peakRSS > maxBombRSS || took > time.Minute {
		t.Fatalf("peak RSS %d MiB (want under %d MiB), %v (killed: %v)", run.peakRSS>>20, maxBombRSS>>20, took, run.killed)
	}
	if run.code != 0 || strings.Count(run.stdout, " configured\n") != objects {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%.2000s", run.code, run.stdout, run.stderr)
	}
}

// createObject creates obj in ns as another writer would: no client
// rewrites its annotations.
func createObject(t *testing.T, gvr schema.GroupVersionResource, ns string, obj map[string]any) {
	t.Helper()
	if _, err := dynClient(t).Resource(gvr).Namespace(ns).Create(context.Background(), &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestMalformedSecretRecordIsNeverQuoted: a Secret whose kubectl record is
// not valid JSON — a PIN out of a float64's range, a control character
// after a password, junk after the record — is refused by apply, diff,
// status, release and last-applied view and edit, each naming the object,
// and none prints any of the record: the decoder's message quoted the
// number whole, and a character of a value. kubectl apply and diff print
// the whole record in their error.
func TestMalformedSecretRecordIsNeverQuoted(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	const secret = "31415926535897932384626433"
	head := `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"NAME"},"stringData":`
	records := map[string]string{
		"pin":      head + `{"pin":` + secret + `e999}}`,
		"control":  head + `{"password":"` + secret + "\x01" + `"}}`,
		"trailing": head + `{"password":"` + secret + `"}}` + secret,
	}
	files := map[string]string{}
	for name, record := range records {
		createObject(t, secrets, ns, map[string]any{"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": name, "annotations": map[string]any{lastapplied.Annotation: strings.Replace(record, "NAME", name, 1)}},
			"data":     map[string]any{"password": "aHVudGVyMg=="}})
		files[name+".yaml"] = "apiVersion: v1\nkind: Secret\nmetadata: {name: " + name + "}\nstringData: {password: changed}\n"
	}
	dir := writeFiles(t, files)
	t.Setenv("KUBE_EDITOR", "true")
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"apply"}, exitFailed},
		{[]string{"apply", "--dry-run=client"}, exitFailed},
		{[]string{"diff"}, exitError},
		{[]string{"diff", "--local", "--explain"}, exitError},
		{[]string{"status"}, exitError},
		{[]string{"release", "--field", "stringData.password"}, exitError},
		{[]string{"last-applied", "view"}, exitError},
		{[]string{"last-applied", "view", "-o", "json"}, exitError},
		{[]string{"last-applied", "edit"}, exitFailed},
	} {
		// One object at a time: status and view stop at the first error.
		for name := range records {
			r := kapply(t, append(c.args, "-f", filepath.Join(dir, name+".yaml"), "-n", ns)...)
			line := strings.Join(c.args, " ") + " of " + name
			if r.code != c.code || !strings.Contains(r.stderr, "error: secret/"+name+" -n "+ns) || !strings.Contains(r.stderr, "not valid JSON") {
				t.Errorf("%s: exit %d, want %d, an error naming the Secret\nstderr:\n%s", line, r.code, c.code, r.stderr)
			}
			if strings.Contains(r.stdout+r.stderr, secret[:8]) {
				t.Errorf("%s prints the record's value:\n%s\n%s", line, r.stdout, r.stderr)
			}
		}
	}
	for name, record := range records {
		live := liveObject(t, secrets, ns, name)
		if live.GetAnnotations()[lastapplied.Annotation] != strings.Replace(record, "NAME", name, 1) {
			t.Errorf("%s: the record changed", name)
		}
	}
}

// TestSelectorPruneDeletesObjectsWithACompactRecord: apply --prune -l
// deletes the objects kapply applied that the files no longer declare,
// those whose record kapply keeps compact (past the annotation limit) too:
// it took only kubectl's record for "applied" and kept them forever. diff
// --prune shows the deletion.
func TestSelectorPruneDeletesObjectsWithACompactRecord(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	big := strings.Replace(bigConfigMap("a", "b", "c", "d"), "metadata: {name: big}", "metadata: {name: big, labels: {app: shop}}", 1)
	small := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: small, labels: {app: shop}}\ndata: {a: \"1\"}\n"
	dir := writeFiles(t, map[string]string{"big.yaml": big, "small.yaml": small})
	if r := kapply(t, "apply", "-f", dir, "-n", ns); r.code != 0 || !strings.Contains(r.stderr, lastapplied.CompactAnnotation) {
		t.Fatalf("apply: exit %d\n%s\n%.2000s", r.code, r.stdout, r.stderr)
	}
	if err := os.Remove(filepath.Join(dir, "big.yaml")); err != nil {
		t.Fatal(err)
	}
	if r := kapply(t, "diff", "-f", dir, "-n", ns, "--prune", "-l", "app=shop"); r.code != exitDifferences || !strings.Contains(r.stdout, "configmap/big") {
		t.Errorf("diff --prune: exit %d, want 1 and configmap/big removed\nstdout:\n%.2000s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	r := kapply(t, "apply", "-f", dir, "-n", ns, "--prune", "-l", "app=shop")
	if r.code != 0 || !strings.Contains(r.stdout, "configmap/big pruned\n") {
		t.Errorf("apply --prune: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if got := liveConfigMaps(t, ns); !slices.Equal(got, []string{"small"}) {
		t.Errorf("live ConfigMaps %v, want [small]", got)
	}
}

// bigCRD is prometheus-operator's Prometheus CRD (830 KB of YAML, a
// record that passes the annotation limit) from the real-world corpus,
// renamed into group so that tests do not share it; skipped without the
// corpus.
func bigCRD(t *testing.T, group string) map[string]any {
	t.Helper()
	content, err := os.ReadFile(filepath.Join(fixture.RealWorldDir(t), "prometheus-operator", "monitoring.coreos.com_prometheuses.yaml"))
	if err != nil {
		t.Skipf("no real-world corpus (set %s): %v", fixture.RealWorldEnv, err)
	}
	var crd map[string]any
	if err := yaml.Unmarshal(content, &crd); err != nil {
		t.Fatal(err)
	}
	crd["metadata"].(map[string]any)["name"] = "prometheuses." + group
	crd["spec"].(map[string]any)["group"] = group
	return crd
}

// writeYAML writes obj as name under dir.
func writeYAML(t *testing.T, dir, name string, obj map[string]any) {
	t.Helper()
	out, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, name, string(out))
}

// TestGenuineCompactRecordOfABigCRD: the bound never refuses a genuine
// record. prometheus-operator's Prometheus CRD, applied by kapply, gets a
// compact record; re-applied unchanged it is unchanged, and without a
// property of its schema that property is removed. Another writer then
// replaces the schema with a one-line one (the object, without its compact
// record, shrinks from 500 KB to 5 KB: the bound's floors hold the record):
// the record is still read — the next apply, whose file drops an
// annotation, removes it and puts the schema back — with no warning that
// the record cannot be read.
func TestGenuineCompactRecordOfABigCRD(t *testing.T) {
	testcluster.Require(t, cluster)
	group := strings.ToLower(cluster.Namespace(t)) + ".example.com"
	crd := bigCRD(t, group)
	name := "prometheuses." + group
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	t.Cleanup(func() {
		_ = dynClient(t).Resource(crds).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	dir := t.TempDir()
	writeYAML(t, dir, "crd.yaml", crd)
	ref := "customresourcedefinition.apiextensions.k8s.io/" + name
	apply := func(step, want string) {
		t.Helper()
		r := kapply(t, "apply", "-f", dir)
		if r.code != 0 || r.stdout != ref+" "+want+"\n" || strings.Contains(r.stderr, "cannot be read") {
			t.Fatalf("%s: exit %d, stdout %q, want %q\nstderr:\n%.2000s", step, r.code, r.stdout, want, r.stderr)
		}
	}
	apply("create", "created")
	live, err := dynClient(t).Resource(crds).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, compact := live.GetAnnotations()[lastapplied.CompactAnnotation]; !compact {
		t.Fatalf("no compact record: %v", live.GetAnnotations())
	}
	apply("re-apply", "unchanged")

	properties := []string{"spec", "versions", "0", "schema", "openAPIV3Schema", "properties", "spec", "properties"}
	specProperties := func(obj map[string]any) map[string]any {
		var v any = obj
		for _, k := range properties {
			if list, ok := v.([]any); ok {
				v = list[0]
				continue
			}
			v = v.(map[string]any)[k]
		}
		return v.(map[string]any)
	}
	delete(specProperties(crd), "additionalAlertManagerConfigs")
	writeYAML(t, dir, "crd.yaml", crd)
	apply("a property removed", "configured")
	live, err = dynClient(t).Resource(crds).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, left := specProperties(live.Object)["additionalAlertManagerConfigs"]; left {
		t.Error("the property removed from the file is still there")
	}

	shrink := `[{"op":"replace","path":"/spec/versions/0/schema/openAPIV3Schema","value":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}]`
	if _, err := dynClient(t).Resource(crds).Patch(context.Background(), name, types.JSONPatchType, []byte(shrink), metav1.PatchOptions{FieldManager: "another-writer"}); err != nil {
		t.Fatal(err)
	}
	delete(crd["metadata"].(map[string]any)["annotations"].(map[string]any), "operator.prometheus.io/version")
	writeYAML(t, dir, "crd.yaml", crd)
	apply("after another writer shrank it", "configured")
	live, err = dynClient(t).Resource(crds).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, left := live.GetAnnotations()["operator.prometheus.io/version"]; left {
		t.Error("the annotation removed from the file is still there")
	}
	if got, want := len(specProperties(live.Object)), len(specProperties(crd)); got != want {
		t.Errorf("the schema holds %d properties of spec, want the file's %d", got, want)
	}
	if data, err := json.Marshal(live.Object); err != nil || len(data) < 200<<10 {
		t.Errorf("the live CRD is %d bytes (err %v): the schema is not back", len(data), err)
	}
}
