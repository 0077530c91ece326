package ignore

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kapply/kapply/internal/fixture"
	"github.com/kapply/kapply/internal/modroot"
)

// pointerGolden holds what parsePointer and pointerPath answered, written
// by the hand-written RFC 6901 parser that github.com/go-openapi/jsonpointer
// replaced: the library must answer the same.
const pointerGolden = "testdata/pointers.golden"

var updatePointers = flag.Bool("update-pointers", false, "rewrite "+pointerGolden)

// pointerCases are the pointers of the package's tests and RFC 6901's
// examples, and malformed ones.
var pointerCases = []string{
	"", "/", "//", "a", "a/b", " /a", "/spec/replicas", "/metadata/labels/team",
	"/data/a~0b~1c", "/data/~01", "/data/~10", "/data/~~1", "/data/~", "/data/~2",
	"/data/k", "/spec/template/spec/containers/0/image", "/spec/containers/-",
	"/spec/containers/01", "/spec/containers/-1", "/spec/containers/99",
	"/foo", "/foo/0", "/a~1b", "/c%d", "/e^f", "/g|h", "/i\\j", "/k\"l", "/ ", "/m~0n",
	"/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration",
	"/metadata/labels/app.kubernetes.io~1name", "/日本/語",
}

// pointerDoc is an object the pointerCases are resolved in.
const pointerDoc = `{"foo": ["bar", "baz"], "": 0, "a/b": 1, "c%d": 2, "e^f": 3, "g|h": 4,
 "i\\j": 5, "k\"l": 6, " ": 7, "m~n": 8, "data": {"a~b/c": 1, "~1": 2, "/0": 3, "~/": 4, "k": 5, "~": 6},
 "spec": {"replicas": 1, "containers": [{"image": "a"}], "template": {"spec": {"containers": [{"image": "b"}]}}},
 "metadata": {"labels": {"team": "t", "app.kubernetes.io/name": "n"},
   "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}},
 "日本": {"語": true}}`

// TestPointersAsBefore: the pointers of pointerCases, and a pointer to
// every field of every object of the project's corpora (../shared/realworld,
// testdata), escaped as RFC 6901 says, parse and resolve as the
// hand-written parser did (pointerGolden). Rewrite with -update-pointers.
func TestPointersAsBefore(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal([]byte(pointerDoc), &doc); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, p := range pointerCases {
		tokens, err := parsePointer(p)
		path, ok := pointerPath(p, doc)
		lines = append(lines, fmt.Sprintf("%q tokens=%q err=%v path=%v ok=%t", p, tokens, err, path, ok))
	}
	root, err := modroot.Root()
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Join(root, "testdata"), fixture.RealWorldDir(t)} {
		for _, file := range manifestsUnder(t, dir) {
			rel, _ := filepath.Rel(filepath.Dir(dir), file)
			lines = append(lines, pointersOfFile(t, filepath.ToSlash(rel), file))
		}
	}
	got := strings.Join(lines, "\n") + "\n"
	if *updatePointers {
		if err := os.WriteFile(pointerGolden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(pointerGolden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("JSON pointers parse differently from the hand-written parser:\n%s\nwant\n%s", got, want)
	}
}

// pointersOfFile resolves a pointer to every field of every object of
// file, and checks each names the field it was made from: one golden line
// of counts and a digest of the paths in order.
func pointersOfFile(t *testing.T, name, file string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.New()
	var objects, pointers int
	reader := yaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var obj map[string]any
		if sigsyaml.Unmarshal(doc, &obj) != nil || obj == nil {
			continue
		}
		objects++
		eachPointer(obj, "", func(pointer string) {
			path, ok := pointerPath(pointer, obj)
			if !ok {
				t.Errorf("%s: pointer %q resolves to nothing", name, pointer)
			}
			fmt.Fprintf(sum, "%s=%v|", pointer, path)
			pointers++
		})
	}
	return fmt.Sprintf("%s objects=%d pointers=%d digest=%x", name, objects, pointers, sum.Sum(nil)[:8])
}

// eachPointer calls fn with the RFC 6901 pointer of every field and list
// element under v, v's pointer being prefix, keys in sorted order.
func eachPointer(v any, prefix string, fn func(string)) {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			e := v[k]
			p := prefix + "/" + strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
			fn(p)
			eachPointer(e, p, fn)
		}
	case []any:
		for i, e := range v {
			p := prefix + "/" + strconv.Itoa(i)
			fn(p)
			eachPointer(e, p, fn)
		}
	}
}

// manifestsUnder lists the .yaml, .yml and .json files under dir, in
// lexical order.
func manifestsUnder(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch filepath.Ext(path) {
		case ".yaml", ".yml", ".json":
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
