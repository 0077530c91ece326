package load

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

// slowDocs is n ConfigMaps of 200 KB each: more than a pipe holds, so a
// writer's bytes reach a reader in pieces.
func slowDocs(prefix string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s-%d}\ndata:\n", prefix, i)
		for j := range 20 {
			fmt.Fprintf(&b, "  k%d: %s\n", j, strings.Repeat("x", 10000))
		}
		b.WriteString("---\n")
	}
	return b.String()
}

// writeSlowly writes s to w in pieces, a little apart.
func writeSlowly(w *os.File, s string) {
	for i := 0; i < len(s); i += 7000 {
		if _, err := w.WriteString(s[i:min(i+7000, len(s))]); err != nil {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// TestLoadOneStreamNamedTwice: two inputs that are one stream (-f - and
// -f /dev/stdin, here the pipe by its /proc name) are read one after the
// other, as the builder reads them: stdin gets the writer's bytes, whole,
// and the second name what is left, nothing. Read at once, the two reads
// shared the bytes, and each got broken documents.
func TestLoadOneStreamNamedTwice(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	byName := fmt.Sprintf("/proc/self/fd/%d", r.Fd())
	go func() {
		writeSlowly(w, slowDocs("cm", 4))
		w.Close()
	}()
	type loaded struct {
		objects []*Object
		errs    []error
	}
	done := make(chan loaded, 1)
	go func() {
		objects, errs := Load(testGetter, Files{Filenames: []string{"-", byName}, Stdin: r}, "")
		done <- loaded{objects, errs}
	}()
	var got loaded
	select {
	case got = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("still reading after 30 s")
	}
	var names []string
	for _, o := range got.objects {
		names = append(names, o.Source+":"+o.Obj.GetName())
	}
	want := "STDIN:cm-0 STDIN:cm-1 STDIN:cm-2 STDIN:cm-3"
	if len(got.errs) > 0 || strings.Join(names, " ") != want {
		t.Errorf("objects %v, errors %v; want %v", names, got.errs, want)
	}
}

// TestFetchRedirectLoopNamesURL: a URL that redirects for ever fails
// naming the URL given (the client's error names only the last
// Location, "/loop"), its password hidden as the client hides it.
func TestFetchRedirectLoopNamesURL(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusFound)
	}))
	defer server.Close()
	u := strings.Replace(server.URL, "://", "://user:hunter2@", 1) + "/start.yaml"
	named := strings.Replace(u, "hunter2", "xxxxx", 1)
	_, errs := Load(testGetter, Files{Filenames: []string{u}}, "")
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), named) || !strings.Contains(errs[0].Error(), "stopped after 10 redirects") ||
		strings.Contains(errs[0].Error(), "hunter2") {
		t.Errorf("errors %v; want one naming %s and the redirects", errs, named)
	}
}
