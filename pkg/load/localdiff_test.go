package load

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/resource"
)

// The tests of readLocal are differential, through the binary's own entry
// point (loadRead, which loadWithLines is): the resource builder (build) is
// the oracle, on input nobody chose for readLocal — real install manifests,
// the repository's testdata, the bad-input corpus, the duplicate-key
// inputs, and generated YAML and JSON.

var testGetter = genericclioptions.NewConfigFlags(false)

// thorough tells the differential tests to read all their input: not with
// -short, nor under the race detector (make test), where they read a fifth.
func thorough() bool {
	return !testing.Short() && !raceEnabled
}

// readStats says how much of the input readLocal read itself.
type readStats struct {
	files, fast, objects, infos, errs int
	reasons                           map[string]int
}

func (s readStats) String() string {
	var reasons []string
	for why, n := range s.reasons {
		reasons = append(reasons, fmt.Sprintf("%d %s", n, why))
	}
	slices.Sort(reasons)
	return fmt.Sprintf("%d files, %d read by readLocal (%d objects); %d objects, %d errors in all; files left to the builder: %s",
		s.files, s.fast, s.objects, s.infos, s.errs, strings.Join(reasons, "; "))
}

// fileInputs are the inputs of paths, files all.
func fileInputs(paths []string) []input {
	inputs := make([]input, len(paths))
	for i, path := range paths {
		inputs[i] = input{source: path, kind: fileInput}
	}
	return inputs
}

// mustListInputs is listInputs, nil when the builder reads files itself.
func mustListInputs(files Files) []input {
	inputs, ok := listInputs(files)
	if !ok {
		return nil
	}
	return inputs
}

// lossyDocumentsAgain reads the file source again (none when it is not a
// regular file) for the documents refuseLossyDocuments refuses: what
// readLocal found in the bytes it read, found apart.
func lossyDocumentsAgain(source string) []lossyDocument {
	if info, err := os.Stat(source); err != nil || !info.Mode().IsRegular() {
		return nil
	}
	data, err := os.ReadFile(source)
	if err != nil {
		return nil
	}
	return lossyDocumentsIn(source, data)
}

// binaryRead is what the binary's read (loadRead, which loadWithLines
// is) gives: Load's objects and errors, and the inputs readLocal read, none
// when the builder read them all, with their infos, errors and refused
// documents put together (collect).
type binaryRead struct {
	objects  []*Object
	loadErrs []error
	read     []*localFile
	infos    []*resource.Info
	errs     []error
	checked  map[string][]lossyDocument
}

// loadAsBinary reads files as the binary does.
func loadAsBinary(files Files, selector string) binaryRead {
	var b binaryRead
	b.objects, b.loadErrs, b.read = loadRead(context.Background(), testGetter, files, selector)
	b.infos, b.errs, b.checked = collect(b.read)
	return b
}

// compareWithBuilder reads files as the binary does (loadAsBinary) and
// with the builder and fails on any difference: the infos field by field
// (objects deeply, the types of numbers included), the errors' text and
// order, the documents refused (against lossyDocumentsAgain, which reads
// each file again), and what Load makes of it all.
func compareWithBuilder(t *testing.T, files Files, selector string) readStats {
	t.Helper()
	if _, ok := listInputs(files); !ok {
		t.Fatalf("%v: not local manifest files, readLocal would not read them", files.Filenames)
	}
	if _, err := labels.Parse(strings.TrimSpace(selector)); err != nil {
		t.Fatal(err)
	}
	got := loadAsBinary(files, selector)
	wantInfos, wantErrs := build(testGetter, files, selector)
	stats := readStats{files: len(got.read), infos: len(got.infos), errs: len(got.errs), reasons: map[string]int{}}
	for _, f := range got.read {
		if f.fallback == "" {
			stats.fast++
			stats.objects += len(f.infos)
		} else {
			stats.reasons[f.fallback]++
		}
	}
	compareInfos(t, got.infos, wantInfos)
	compareErrors(t, "errors", got.errs, wantErrs)
	reread := map[string][]lossyDocument{}
	for source, lossy := range got.checked {
		reread[source] = lossyDocumentsAgain(source)
		compareLossy(t, source, lossy, reread[source])
	}
	// Load, end to end (reread holds what Load without readLocal reads).
	compareObjects(t, got, wantInfos, wantErrs, reread)
	return stats
}

// compareLoadWithBuilder is compareWithBuilder for inputs the test cannot
// read again (stdin, URLs) or the builder reads alone (a bad selector),
// against the builder's wantInfos and wantErrs: the documents Load refuses
// are those readLocal found.
func compareLoadWithBuilder(t *testing.T, what string, files Files, selector string, wantInfos []*resource.Info, wantErrs []error) binaryRead {
	t.Helper()
	got := loadAsBinary(files, selector)
	if got.read != nil {
		compareInfos(t, got.infos, wantInfos)
		compareErrors(t, what, got.errs, wantErrs)
	}
	compareObjects(t, got, wantInfos, wantErrs, got.checked)
	return got
}

// compareObjects compares Load's objects and errors with those of the
// builder's infos and errors, refusing the documents of checked.
func compareObjects(t *testing.T, got binaryRead, wantInfos []*resource.Info, wantErrs []error, checked map[string][]lossyDocument) {
	t.Helper()
	wantObjects, wantLoadErrs := objectsOfInfos(wantInfos, wantErrs, checked)
	if len(got.objects) != len(wantObjects) {
		t.Fatalf("Load: %d objects, the builder's load %d", len(got.objects), len(wantObjects))
	}
	for i, o := range got.objects {
		w := wantObjects[i]
		if o.Source != w.Source || o.Index != w.Index || !reflect.DeepEqual(o.Obj, w.Obj) {
			t.Fatalf("Load: object %d: %s #%d %v, the builder's load %s #%d %v", i, o.Source, o.Index, o.Obj, w.Source, w.Index, w.Obj)
		}
	}
	compareErrors(t, "Load errors", got.loadErrs, wantLoadErrs)
}

func compareInfos(t *testing.T, got, want []*resource.Info) {
	t.Helper()
	for i := range min(len(got), len(want)) {
		g, w := got[i], want[i]
		same := g.Source == w.Source && g.Namespace == w.Namespace && g.Name == w.Name &&
			g.ResourceVersion == w.ResourceVersion && g.Subresource == w.Subresource &&
			g.Mapping == nil && w.Mapping == nil && g.Client == nil && w.Client == nil &&
			reflect.DeepEqual(g.Object, w.Object)
		if !same {
			t.Fatalf("info %d differs:\nreadLocal: %s %q/%q rv %q %#v\nbuilder:   %s %q/%q rv %q %#v\n%s",
				i, g.Source, g.Namespace, g.Name, g.ResourceVersion, g.Object,
				w.Source, w.Namespace, w.Name, w.ResourceVersion, w.Object, fileHead(w.Source))
		}
	}
	if len(got) != len(want) {
		n := min(len(got), len(want))
		var first *resource.Info
		if n < len(got) {
			first = got[n]
		} else {
			first = want[n]
		}
		t.Fatalf("%d infos, the builder %d; the first not in both from %s:\n%s", len(got), len(want), first.Source, fileHead(first.Source))
	}
}

func compareErrors(t *testing.T, what string, got, want []error) {
	t.Helper()
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i].Error()
		}
		if i < len(want) {
			w = want[i].Error()
		}
		if g != w {
			t.Fatalf("%s: %d, the builder %d; #%d differs:\nreadLocal: %s\nbuilder:   %s", what, len(got), len(want), i, g, w)
		}
	}
}

func compareLossy(t *testing.T, source string, got, want []lossyDocument) {
	t.Helper()
	text := func(docs []lossyDocument) []string {
		var s []string
		for _, d := range docs {
			s = append(s, fmt.Sprintf("%d %q %v", d.n, d.doc[:min(len(d.doc), 300)], d.err))
		}
		return s
	}
	if g, w := text(got), text(want); !slices.Equal(g, w) {
		t.Fatalf("%s: refused documents\n%q\nreading the file again:\n%q", source, g, w)
	}
}

// fileHead is the start of a file, for a failure message.
func fileHead(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(data) > 3000 {
		data = data[:3000]
	}
	return fmt.Sprintf("--- %s:\n%s", path, data)
}

// writeFiles writes files (name → content) under dir and returns their
// paths, sorted.
func writeFiles(t testing.TB, dir string, files map[string][]byte) []string {
	t.Helper()
	var paths []string
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	slices.Sort(paths)
	return paths
}

func gunzip(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
