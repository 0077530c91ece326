package load

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kapply/kapply/internal/fixture"
)

// TestReadLocalRealWorld: the install manifests of seven projects, each file
// given by name and the whole tree with -R, with and without selectors.
func TestReadLocalRealWorld(t *testing.T) {
	root := fixture.RealWorldDir(t)
	var names []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	stats := compareWithBuilder(t, Files{Filenames: names}, "")
	t.Logf("by name: %v", stats)
	if stats.objects < 160 {
		t.Errorf("readLocal read %d objects of the corpus itself, want its 160", stats.objects)
	}
	if !thorough() {
		return
	}
	t.Logf("-R -l app.kubernetes.io/part-of=argocd: %v", compareWithBuilder(t, Files{Filenames: []string{root}, Recursive: true}, "app.kubernetes.io/part-of=argocd"))
	t.Logf("-l '!app.kubernetes.io/name,control-plane notin (x)': %v", compareWithBuilder(t, Files{Filenames: names}, "!app.kubernetes.io/name,control-plane notin (x)"))
}

// TestReadLocalTestdata: every file of the repository's testdata, given by
// name (golden files and gzip data included), and the OpenAPI documents
// unzipped as JSON.
func TestReadLocalTestdata(t *testing.T) {
	var names []string
	unzipped := map[string][]byte{}
	err := filepath.WalkDir("../../testdata", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		names = append(names, path)
		if strings.HasSuffix(path, ".json.gz") {
			unzipped[strings.TrimSuffix(d.Name(), ".gz")] = gunzip(t, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	names = append(names, writeFiles(t, t.TempDir(), unzipped)...)
	t.Logf("%v", compareWithBuilder(t, Files{Filenames: names}, ""))
	if thorough() {
		t.Logf("-R: %v", compareWithBuilder(t, Files{Filenames: []string{"../../testdata"}, Recursive: true}, ""))
	}
}

// TestReadLocalInvalidSelector: the builder's one error, once.
func TestReadLocalInvalidSelector(t *testing.T) {
	paths := writeFiles(t, t.TempDir(), map[string][]byte{"a.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")})
	files := Files{Filenames: paths}
	wantInfos, wantErrs := build(testGetter, files, "a in (")
	got := compareLoadWithBuilder(t, "errors", files, "a in (", wantInfos, wantErrs)
	if len(got.loadErrs) != 1 || len(got.objects) != 0 {
		t.Errorf("%d objects, errors %v, want the selector's error alone", len(got.objects), got.loadErrs)
	}
}

// TestReadLocalEdgeCases: the builder's rules readLocal mirrors, one file
// each — Lists (items null, empty, null items, items without kind or
// version, a List in a List, the List's resourceVersion), namespaces
// removed when empty or null, metadata the builder refuses or decodes
// only with its typed decoder, JSON streams, separators, line ends.
func TestReadLocalEdgeCases(t *testing.T) {
	head := "apiVersion: v1\nkind: ConfigMap\n"
	files := map[string][]byte{}
	for i, doc := range []string{
		"apiVersion: v1\nkind: List\nitems: null\n",
		"apiVersion: v1\nkind: List\nitems: []\n",
		"apiVersion: v1\nkind: ConfigMapList\nmetadata: {resourceVersion: '7'}\nitems:\n- ~\n- {metadata: {name: a, resourceVersion: '3'}}\n- {apiVersion: v2, kind: Secret, metadata: {name: s, namespace: ''}}\n",
		"apiVersion: v1\nkind: List\nitems:\n- {kind: ConfigMap, metadata: {name: no-version}}\n",
		"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, metadata: {name: no-kind}}\n",
		"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: List, items: [{apiVersion: v1, kind: ConfigMap, metadata: {name: inner}}]}\n",
		"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}, items: x}\n",
		"apiVersion: v1\nkind: List\nitems: x\n",
		"apiVersion: v1\nkind: List\nitems: [1]\n",
		"apiVersion: v1\nkind: Foo\nItems: [{apiVersion: v1, kind: ConfigMap}]\nmetadata: {name: capital}\n",
		"kind: List\nitems: [{apiVersion: v1, kind: ConfigMap, metadata: {name: a}}]\n",
		"apiVersion: a/b/c\nkind: List\nitems: []\n",
		head + "metadata: {name: a, namespace: ''}\n",
		head + "metadata: {name: a, namespace: ~}\n",
		head + "metadata: {name: a, namespace: ns}\n",
		head + "metadata: ~\n",
		head + "metadata: {name: n}\n", // YAML 1.1: n is false
		head + "metadata: {name: a, labels: {app: ~}}\n",
		head + "metadata: {name: a, labels: {app: 1}}\n",
		head + "metadata: {name: a, creationTimestamp: '2020-01-01T00:00:00Z', deletionTimestamp: ~}\n",
		head + "metadata: {name: a, creationTimestamp: 2020-01-01}\n",
		head + "metadata: {name: a, ownerReferences: [{apiVersion: v1, kind: A, name: o, uid: u, controller: true}]}\n",
		head + "metadata: {name: a, ownerReferences: [{controller: yes}]}\n",
		head + "metadata: {name: a, managedFields: [{manager: m, fieldsV1: {f:data: {}}, time: '2020-01-01T00:00:00Z'}]}\n",
		head + "metadata: {name: a, generation: 1e3, deletionGracePeriodSeconds: 1.0}\n",
		head + "metadata: {name: a, generation: 1.5}\n",
		head + "metadata: {name: a, Name: 1, other: {x: [1]}}\n",
		"apiVersion: 1\nkind: ConfigMap\nmetadata: {name: a}\n",
		"kind: ConfigMap\nmetadata: {name: no-api-version}\n",
		"apiVersion: v1\nmetadata: {name: no-kind}\n",
		head + "metadata: {name: a}\n...\nignored: after the end\n",
		head + "metadata: {name: a}\n---\n---\n# comment\n---\n~\n---\nnull\n---\n" + head + "metadata: {name: b}",
		"# comment\n{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"j\"}, \"data\": {\"k\": \"1\", \"k\": \"2\"}}\n",
		"---\n{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"j\"}}\n---\n" + head + "metadata: {name: y}\n",
		"\n  {\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"j\"}}, null]} null\n{\"apiVersion\": \"v1\", \"kind\": \"Secret\", \"metadata\": {\"name\": \"s\", \"labels\": {\"app\": \"a\"}}, \"data\": {\"k\": \"1\", \"k\": \"2\", \"n\": 18446744073709551616, \"f\": 1.0}}",
		"{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"j\"}}\n---\n" + head + "metadata: {name: y}\n",
		"{apiVersion: v1, kind: ConfigMap, metadata: {name: flow}}\n",
		"[{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"j\"}}]\n",
		"\r\n" + strings.ReplaceAll(head+"metadata:\n  name: crlf\ndata:\n  k: |\n    a\n    b\n", "\n", "\r\n"),
		head + "metadata: {name: a}\ndata:\n  k: \"\\ud800\"\n",
		head + "metadata: {name: a}\ndata: &d {a: 1, b: [1, 2]}\nstringData:\n  <<: *d\n  c: 3\nbinaryData: *d\n",
		head + "metadata: {name: a}\ndata: &d {a: 1}\nstringData:\n  <<: *d\n  a: 2\n",
		"",
		"--- x\n" + head,
		strings.Repeat(" ", 5000) + "{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"far\"}}\n",
	} {
		files[fmt.Sprintf("e%02d.yaml", i)] = []byte(doc)
	}
	paths := writeFiles(t, t.TempDir(), files)
	for _, selector := range []string{"", "!app", "app=a"} {
		t.Logf("-l %q: %v", selector, compareWithBuilder(t, Files{Filenames: paths}, selector))
	}
}
