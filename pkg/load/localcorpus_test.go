package load

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// badInputFiles are the files of the bad-input corpus of cmd/kapply
// (badInputCorpus in badinput_test.go, a test of package main that cannot
// be imported), as written there: malformed and hostile input.
func badInputFiles() map[string][]byte {
	random := make([]byte, 4096)
	rng := rand.New(rand.NewPCG(12, 34))
	for i := range random {
		random[i] = byte(rng.UintN(256))
	}
	deep := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\ndata: {a: b}\nextra: " +
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + "\n"
	huge := `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "huge"}, "data": {"value": "` + strings.Repeat("x", 5<<20) + `"}}`
	var bomb strings.Builder
	bomb.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\nbomb:\n  a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	prev := "a"
	for _, level := range "bcdefghi" {
		fmt.Fprintf(&bomb, "  %s: &%s [%s]\n", string(level), string(level), strings.TrimSuffix(strings.Repeat("*"+prev+",", 9), ","))
		prev = string(level)
	}
	utf16 := []byte{0xff, 0xfe}
	for _, r := range "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: sixteen}\n" {
		utf16 = append(utf16, byte(r), byte(r>>8))
	}
	return map[string][]byte{
		"malformed.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: broken\n"),
		"tabs.yaml":      []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: tabs\n"),
		"binary.yaml":    random,
		"nul.yaml":       []byte("apiVersion: v1\nkind: ConfigMap\x00\nmetadata: {name: nul}\n"),
		"utf8.yaml":      []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: utf}\ndata: {a: \"\xff\xfe\"}\n"),
		"utf16.yaml":     utf16,
		"truncated.json": []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"tr`),
		"empty.yaml":     []byte("---\n---\n\n---\n# only a comment\n---\n"),
		"dup.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dup}\ndata:\n  k: \"1\"\n  k: \"2\"\n" +
			"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: fine}\n"),
		"dupmeta.yaml":    []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: one}\nmetadata: {name: two}\n"),
		"scalar.yaml":     []byte("just a string\n"),
		"list.yaml":       []byte("- a\n- b\n"),
		"metalist.yaml":   []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: [a, b]\n"),
		"noname.yaml":     []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {labels: {a: b}}\n"),
		"badname.yaml":    []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Bad_Name}\n"),
		"unknown.yaml":    []byte("apiVersion: nope.example.com/v1\nkind: Nope\nmetadata: {name: nope}\n"),
		"version.yaml":    []byte("apiVersion: apps/v9\nkind: Deployment\nmetadata: {name: d}\n"),
		"badlist.yaml":    []byte("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: ok-in-list}}\n- {kind: ConfigMap, metadata: {name: no-version}}\n- 42\n"),
		"huge.json":       []byte(huge),
		"dupjson.json":    []byte(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dupjson"}, "data": {"k": "1", "k": "2"}}`),
		"deep.yaml":       []byte(deep),
		"bomb.yaml":       []byte(bomb.String()),
		"good.yaml":       []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: good\ndata:\n  k: v\n"),
		"sub/nested.yaml": []byte("apiVersion: v1\nkind: Secret\nmetadata: {name: nested}\n"),
	}
}

// TestReadLocalBadInput: the bad-input corpus, each file by name and the
// tree with -R, with symlinks (a loop of files, a dangling one, one to a
// parent directory) and an unreadable file.
func TestReadLocalBadInput(t *testing.T) {
	dir := t.TempDir()
	names := writeFiles(t, dir, badInputFiles())
	// Symlinks the walk of -R finds; by name, a path that does not resolve
	// to a file or a directory of manifests leaves the whole load to the
	// builder (listInputs).
	for _, link := range [][2]string{{"b-link.yaml", "a-link.yaml"}, {"a-link.yaml", "b-link.yaml"}, {"missing.yaml", "dangling.yaml"}, {"..", "sub/loop"}, {"good.yaml", "alias.yaml"}} {
		if err := os.Symlink(link[0], filepath.Join(dir, link[1])); err != nil {
			t.Fatal(err)
		}
	}
	names = append(names, filepath.Join(dir, "alias.yaml"))
	locked := filepath.Join(dir, "locked.yaml")
	if err := os.WriteFile(locked, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: locked}\n"), 0); err != nil {
		t.Fatal(err)
	}
	names = append(names, locked)
	t.Logf("-R: %v", compareWithBuilder(t, Files{Filenames: []string{dir}, Recursive: true}, ""))
	if thorough() {
		t.Logf("by name: %v", compareWithBuilder(t, Files{Filenames: names}, ""))
		t.Logf("-l app: %v", compareWithBuilder(t, Files{Filenames: []string{dir}}, "app"))
	}
}

// TestReadLocalDuplicateKeyInputs: the documents the duplicate-key checks
// are tested with (lossErrorCases, uniqueDocuments, duplicateDocuments),
// and 10,000 generated block documents of few keys — as they are, and as
// the data of an object — one file each.
func TestReadLocalDuplicateKeyInputs(t *testing.T) {
	files := map[string][]byte{}
	add := func(doc string) {
		files[fmt.Sprintf("doc-%05d.yaml", len(files))] = []byte(doc)
	}
	for _, c := range lossErrorCases {
		if collidingKeys([]byte(c.doc)) != nil {
			continue // the builder keeps either value: it has no one answer
		}
		add(c.doc)
		add("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\n" + c.doc)
	}
	for _, doc := range append(uniqueDocuments, duplicateDocuments...) {
		add(doc)
		add("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n" + indent(doc))
	}
	n := 10000
	if !thorough() {
		n = 2000
	}
	for i, doc := range blockDocuments(7, n) {
		if i%2 == 0 {
			add(string(doc))
		} else {
			add("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n" + indent(string(doc)))
		}
	}
	dir := t.TempDir()
	writeFiles(t, dir, files)
	stats := compareWithBuilder(t, Files{Filenames: []string{dir}}, "")
	t.Logf("%v", stats)
	if stats.fast < n/20 { // most are not YAML, or set a key twice
		t.Errorf("readLocal read %d of %d files: the test checks too little of it", stats.fast, stats.files)
	}
}

// indent indents each line of doc by two spaces.
func indent(doc string) string {
	return "  " + strings.ReplaceAll(strings.TrimSuffix(doc, "\n"), "\n", "\n  ") + "\n"
}

// TestReadLocalGenerated: 30,000 random documents (6,000 when not
// thorough), in files of one to three, read by readLocal and by the
// builder, with and without a selector.
func TestReadLocalGenerated(t *testing.T) {
	docs := 30000
	if !thorough() {
		docs = 6000
	}
	g := &yamlGen{r: rand.New(rand.NewPCG(1, 2))}
	files := map[string][]byte{}
	for n := 0; n < docs; n += 2 {
		ext := []string{".yaml", ".yml", ".json"}[g.r.IntN(3)]
		files[fmt.Sprintf("d%02d/f-%05d%s", n%50, n, ext)] = g.file()
	}
	dir := t.TempDir()
	writeFiles(t, dir, files)
	stats := compareWithBuilder(t, Files{Filenames: []string{dir}, Recursive: true}, "")
	t.Logf("%v", stats)
	if stats.fast < stats.files/2 || stats.objects < docs/3 {
		t.Errorf("readLocal read %d of %d files, %d objects: the generator makes too little it reads", stats.fast, stats.files, stats.objects)
	}
	t.Logf("-l 'app in (a, b),!skip': %v", compareWithBuilder(t, Files{Filenames: []string{dir + "/d02", dir + "/d04"}}, "app in (a, b),!skip"))
}
