package load

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/resource"
)

// streamContents are stdin and URL bodies of every shape the builder reads
// apart: YAML, JSON, a byte order mark, UTF-16, bad YAML, nothing.
var streamContents = []string{
	cm + "metadata: {name: a}\n---\n" + cm + "metadata: {name: b, labels: {app: a}}\n",
	`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "j"}}`,
	"\xef\xbb\xbf" + cm + "metadata: {name: bom}\n",
	"\xff\xfe" + string(utf16LE(cm+"metadata: {name: sixteen}\n")),
	cm + "metadata: {name: [broken\n",
	cm + "metadata:\n  name: m\n  labels: &c {tier: old}\n  annotations: {tier: new, <<: *c}\n",
	"",
}

func utf16LE(s string) []byte {
	var b []byte
	for _, r := range s {
		b = append(b, byte(r), byte(r>>8))
	}
	return b
}

// TestReadStdinAsBuilder: "-" read from Files.Stdin gives the builder's
// infos and errors for the same bytes on the process's stdin.
func TestReadStdinAsBuilder(t *testing.T) {
	for _, content := range streamContents {
		files := Files{Filenames: []string{"-"}, Stdin: strings.NewReader(content)}
		wantInfos, wantErrs := withProcessStdin(t, content, func() ([]*resource.Info, []error) { return build(testGetter, files, "") })
		compareLoadWithBuilder(t, "errors", files, "", wantInfos, wantErrs)
	}
}

// withProcessStdin runs fn with os.Stdin reading content: the builder
// reads os.Stdin itself.
func withProcessStdin[T any](t *testing.T, content string, fn func() (T, []error)) (T, []error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "stdin")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	saved := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = saved }()
	return fn()
}

// TestReadURLAsBuilder: a URL read by fetch gives the builder's infos and
// errors: bodies of every shape, a 404, a server that is gone.
func TestReadURLAsBuilder(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, streamContents[len(r.URL.Path)-1])
	}))
	defer server.Close()
	names := []string{server.URL + "/missing"}
	for i := range streamContents {
		names = append(names, server.URL+"/"+strings.Repeat("x", i))
	}
	for _, name := range names {
		files := Files{Filenames: []string{name, name}}
		wantInfos, wantErrs := build(testGetter, files, "app=a")
		compareLoadWithBuilder(t, name, files, "app=a", wantInfos, wantErrs)
	}
	if testing.Short() {
		return // the builder tries a refused connection three times, a second apart
	}
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	files := Files{Filenames: []string{gone.URL + "/x.yaml"}}
	wantInfos, wantErrs := build(testGetter, files, "")
	compareLoadWithBuilder(t, "a refused connection", files, "", wantInfos, wantErrs)
}

// TestLoadCancelled: a load waiting on a stdin that never ends, or on a
// FIFO no one opens, returns as soon as its context is done, naming the
// input and the cause.
func TestLoadCancelled(t *testing.T) {
	stdin, writer := io.Pipe()
	defer writer.Close()
	fifo := filepath.Join(t.TempDir(), "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ file, name string }{{"-", "STDIN"}, {fifo, fifo}} {
		ctx, cancel := context.WithCancelCause(context.Background())
		time.AfterFunc(50*time.Millisecond, func() { cancel(errors.New("stopped by the test")) })
		start := time.Now()
		objects, errs := LoadContext(ctx, testGetter, Files{Filenames: []string{c.file}, Stdin: stdin}, "")
		took := time.Since(start)
		want := "error reading " + c.name + ": stopped by the test"
		if len(objects) != 0 || len(errs) != 1 || errs[0].Error() != want {
			t.Errorf("-f %s: %d objects, errors %v; want %q", c.file, len(objects), errs, want)
		}
		if took > time.Second {
			t.Errorf("-f %s: returned %s after the cancel", c.file, took)
		}
	}
}

// TestReadAllBounds: readAll stops one byte past MaxInputSize, a regular
// file that large before reading it, and returns what it read whole
// below it, across its chunks.
func TestReadAllBounds(t *testing.T) {
	ctx := context.Background()
	data := bytes.Repeat([]byte("0123456789abcdef"), (3*maxChunk)/16+7)
	got, err := readAll(ctx, "x", iotestOneByteAtTheEnd{bytes.NewReader(data)})
	if err != nil || !bytes.Equal(got, data) {
		t.Errorf("%d bytes (%v), want the %d read", len(got), err, len(data))
	}
	if _, err := readAll(ctx, "endless", endless{}); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "error reading endless: larger than 256 MiB") {
		t.Errorf("an endless reader: %v", err)
	}
	if !thorough() {
		return // 512 MiB
	}
	exact := io.LimitReader(endless{}, MaxInputSize)
	if got, err := readAll(ctx, "exact", exact); err != nil || len(got) != MaxInputSize {
		t.Errorf("exactly MaxInputSize: %d bytes, %v", len(got), err)
	}
}

// iotestOneByteAtTheEnd reads as its reader does, but returns io.EOF with
// the last bytes (as some readers do).
type iotestOneByteAtTheEnd struct{ r *bytes.Reader }

func (r iotestOneByteAtTheEnd) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err == nil && r.r.Len() == 0 {
		err = io.EOF
	}
	return n, err
}

type endless struct{}

func (endless) Read(p []byte) (int, error) { return len(p), nil }

// TestListInputsAsBuilder: what listInputs lists, and where it leaves the
// builder to fail, match the builder's FilenameParam: globs, directories
// without manifests before and after others, stdin among files or twice,
// missing paths, bad patterns and URLs.
func TestListInputsAsBuilder(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string][]byte{
		"a.yaml":       []byte(cm + "metadata: {name: a}\n"),
		"b.yml":        []byte(cm + "metadata: {name: b}\n"),
		"c.txt":        []byte(cm + "metadata: {name: c}\n"),
		"none/notes":   []byte("not a manifest"),
		"sub/d.json":   []byte(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "d"}}`),
		"sub/e/f.yaml": []byte(cm + "metadata: {name: f}\n"),
	})
	at := func(name string) string { return filepath.Join(dir, name) }
	stdin := cm + "metadata: {name: s}\n"
	for _, c := range []struct {
		names     []string
		recursive bool
	}{
		{names: []string{at("*.y*ml")}},
		{names: []string{at("s*"), at("c.txt")}, recursive: true},
		{names: []string{at("none"), at("a.yaml")}},
		{names: []string{at("a.yaml"), at("none")}},
		{names: []string{"-", at("none")}},
		{names: []string{at("a.yaml"), "-", at("sub")}},
		{names: []string{"-", "-"}},
		{names: []string{at("a.yaml"), at("missing.yaml")}},
		{names: []string{at("missing*.yaml")}},
		{names: []string{at("[")}},
		{names: []string{at("a.yaml"), "http://%zz/x.yaml"}},
	} {
		files := Files{Filenames: c.names, Recursive: c.recursive, Stdin: strings.NewReader(stdin)}
		wantInfos, wantErrs := withProcessStdin(t, stdin, func() ([]*resource.Info, []error) { return build(testGetter, files, "") })
		got := compareLoadWithBuilder(t, strings.Join(c.names, " "), files, "", wantInfos, wantErrs)
		if len(got.objects)+len(got.loadErrs) == 0 {
			t.Errorf("%v: nothing read, no error: the case tests nothing", c.names)
		}
	}
}
