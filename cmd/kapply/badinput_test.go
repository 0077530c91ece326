package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kapply/kapply/internal/testcluster"
)

// badInput is one file (or tree) of the bad-input corpus. The corpus is
// generated here, not stored: a 5 MB object and random bytes have no place
// in the repository.
type badInput struct {
	name string
	// files are written under the case's directory, beside good.yaml.
	files map[string][]byte
	// setup arranges what files cannot say (symlinks, modes); it returns a
	// reason to skip the case, or "".
	setup func(t *testing.T, dir string) string
	// recursive applies the directory with -R; otherwise each file is
	// given with -f, the bad one first.
	recursive bool
	// ok marks input that is only unusual: exit 0, no error. Otherwise
	// some file or object failed: exit 1.
	ok bool
	// mention are the parts the error must name beside the bad file's
	// path (the object, where there is one); "" disables the path check.
	mention []string
	// absent is an object of the bad file that must not be applied;
	// present one that must.
	absent, present string
}

// badInputCorpus is the standing corpus of malformed and hostile input.
func badInputCorpus() []badInput {
	random := make([]byte, 4096)
	rng := rand.New(rand.NewPCG(12, 34))
	for i := range random {
		random[i] = byte(rng.UintN(256))
	}
	deep := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\ndata: {a: b}\nextra: " +
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + "\n"
	huge := `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "huge"}, "data": {"value": "` + strings.Repeat("x", 5<<20) + `"}}`
	return []badInput{
		{name: "malformed YAML", files: map[string][]byte{"bad.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: broken\n")}},
		{name: "tab indentation", files: map[string][]byte{"bad.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: tabs\n")}},
		{name: "binary file", files: map[string][]byte{"bad.yaml": random}},
		{name: "NUL bytes in YAML", files: map[string][]byte{"bad.yaml": []byte("apiVersion: v1\nkind: ConfigMap\x00\nmetadata: {name: nul}\n")}},
		{name: "invalid UTF-8", files: map[string][]byte{"bad.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: utf}\ndata: {a: \"\xff\xfe\"}\n")},
			absent: "utf"},
		{name: "UTF-16 with a byte order mark", files: map[string][]byte{"utf16.yaml": utf16("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: sixteen}\n")},
			ok: true},
		{name: "truncated JSON", files: map[string][]byte{"bad.json": []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"tr`)}},
		{name: "empty documents", files: map[string][]byte{"empty.yaml": []byte("---\n---\n\n---\n# only a comment\n---\n")}, ok: true},
		{name: "duplicate keys in a map", files: map[string][]byte{"bad.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dup}\ndata:\n  k: \"1\"\n  k: \"2\"\n" +
			"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: fine}\n")}, absent: "dup", present: "fine"},
		// 1 and "1" are two keys in YAML and one in JSON: the builder keeps
		// either value, by map order.
		{name: "keys that collide in JSON", files: map[string][]byte{"bad.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: collide}\ndata:\n  1: a\n  \"1\": b\n" +
			"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: fine}\n")}, absent: "collide", present: "fine"},
		{name: "duplicate metadata", files: map[string][]byte{"bad.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: one}\nmetadata: {name: two}\n")}},
		{name: "scalar document", files: map[string][]byte{"bad.yaml": []byte("just a string\n")}},
		{name: "list document", files: map[string][]byte{"bad.yaml": []byte("- a\n- b\n")}},
		{name: "metadata is a list", files: map[string][]byte{"bad.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: [a, b]\n")}},
		{name: "no name", files: map[string][]byte{"bad.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {labels: {a: b}}\n")}},
		{name: "name the server refuses", files: map[string][]byte{"bad.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Bad_Name}\n")},
			mention: []string{"configmap/Bad_Name"}},
		{name: "unknown kind", files: map[string][]byte{"bad.yaml": []byte("apiVersion: nope.example.com/v1\nkind: Nope\nmetadata: {name: nope}\n")},
			mention: []string{"nope.nope.example.com/nope"}},
		{name: "unknown version", files: map[string][]byte{"bad.yaml": []byte("apiVersion: apps/v9\nkind: Deployment\nmetadata: {name: d}\n")},
			mention: []string{"deployment.apps/d"}},
		{name: "List with bad items", files: map[string][]byte{"bad.yaml": []byte("apiVersion: v1\nkind: List\nitems:\n" +
			"- {apiVersion: v1, kind: ConfigMap, metadata: {name: ok-in-list}}\n- {kind: ConfigMap, metadata: {name: no-version}}\n- 42\n")}},
		// JSON: a 5 MB YAML scalar takes the builder 8 s under -race.
		{name: "huge object (5 MB)", files: map[string][]byte{"huge.json": []byte(huge)}, mention: []string{"configmap/huge"}},
		{name: "duplicate keys in JSON", files: map[string][]byte{"bad.json": []byte(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dupjson"}, "data": {"k": "1", "k": "2"}}`)},
			absent: "dupjson"},
		{name: "deep nesting (10000 levels)", files: map[string][]byte{"bad.yaml": []byte(deep)}},
		{name: "alias bomb", files: map[string][]byte{"bad.yaml": []byte(aliasBomb())}},
		{name: "symlink to a parent in -R", recursive: true, setup: func(t *testing.T, dir string) string {
			return symlink(t, "..", filepath.Join(dir, "sub", "loop"))
		}, mention: []string{""}, ok: true},
		{name: "symlink loop of files", recursive: true, setup: func(t *testing.T, dir string) string {
			return symlink(t, "b.yaml", filepath.Join(dir, "a.yaml")) + symlink(t, "a.yaml", filepath.Join(dir, "b.yaml"))
		}, mention: []string{"a.yaml"}},
		{name: "dangling symlink", recursive: true, setup: func(t *testing.T, dir string) string {
			return symlink(t, "missing.yaml", filepath.Join(dir, "dangling.yaml"))
		}, mention: []string{"dangling.yaml"}},
		{name: "unreadable file", files: map[string][]byte{"bad.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: secret-ish}\n")},
			setup: func(t *testing.T, dir string) string {
				path := filepath.Join(dir, "bad.yaml")
				if err := os.Chmod(path, 0); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = os.Chmod(path, 0o644) })
				if f, err := os.Open(path); err == nil {
					_ = f.Close()
					return "this user reads files with mode 000 (root)"
				}
				return ""
			}},
	}
}

// aliasBomb is the "billion laughs" in YAML: nine levels of nine aliases,
// 9^9 strings once expanded.
func aliasBomb() string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\nbomb:\n  a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	prev := "a"
	for _, level := range "bcdefghi" {
		name := string(level)
		fmt.Fprintf(&b, "  %s: &%s [%s]\n", name, name, strings.TrimSuffix(strings.Repeat("*"+prev+",", 9), ","))
		prev = name
	}
	return b.String()
}

// utf16 is s in UTF-16, little endian, with a byte order mark, as some
// Windows editors write YAML.
func utf16(s string) []byte {
	out := []byte{0xff, 0xfe}
	for _, r := range s {
		out = append(out, byte(r), byte(r>>8))
	}
	return out
}

func symlink(t *testing.T, target, link string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	return ""
}

// TestBadInputNeverStopsTheGoodObjects runs `kapply apply` on each input
// of the corpus beside a good object: no panic, the good object applied,
// an error naming the bad file (and object), exit 1 — or 0 for input that
// is only unusual (empty documents, a symlink to a parent directory). Paths
// hold no comma: -f splits at commas, as kubectl's does.
func TestBadInputNeverStopsTheGoodObjects(t *testing.T) {
	testcluster.Require(t, cluster)
	corpus := badInputCorpus()
	tried, held, skipped := 0, 0, 0
	for i, c := range corpus {
		t.Run(c.name, func(t *testing.T) {
			t.Cleanup(func() {
				tried++
				switch {
				case t.Skipped():
					skipped++
				case !t.Failed():
					held++
				}
			})
			applyBadInput(t, i, c)
		})
	}
	t.Logf("bad input: %d cases tried, %d held, %d skipped", tried-skipped, held, skipped)
}

func applyBadInput(t *testing.T, i int, c badInput) {
	ns := cluster.Namespace(t)
	dir := t.TempDir()
	good := fmt.Sprintf("good-%d", i)
	files := map[string][]byte{"good.yaml": fmt.Appendf(nil, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\ndata: {a: \"1\"}\n", good)}
	for name, content := range c.files {
		files[name] = content
	}
	var paths []string
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
		if name != "good.yaml" {
			paths = append(paths, path)
		}
	}
	if c.setup != nil {
		if reason := c.setup(t, dir); reason != "" {
			t.Skip(reason)
		}
	}
	args := []string{"apply", "-n", ns}
	if c.recursive {
		args = append(args, "-R", "-f", dir)
	} else {
		for _, p := range paths {
			args = append(args, "-f", p)
		}
		args = append(args, "-f", filepath.Join(dir, "good.yaml"))
	}
	start := time.Now()
	r := kapply(t, args...)
	took := time.Since(start)
	t.Logf("exit %d in %s; stderr: %.900s", r.code, took.Round(time.Millisecond), r.stderr)
	wantCode := exitFailed
	if c.ok {
		wantCode = exitOK
	}
	if r.code != wantCode {
		t.Errorf("exit %d, want %d", r.code, wantCode)
	}
	if took > 20*time.Second {
		t.Errorf("took %s", took)
	}
	live := liveConfigMaps(t, ns)
	for _, name := range []string{good, c.present} {
		if name != "" && !slices.Contains(live, name) {
			t.Errorf("the good object %s was not applied", name)
		}
	}
	if c.absent != "" && slices.Contains(live, c.absent) {
		t.Errorf("%s was applied", c.absent)
	}
	if c.ok {
		return
	}
	mention := c.mention
	if len(c.mention) == 0 || !c.recursive {
		mention = append(mention, paths...)
	}
	for _, m := range mention {
		if m != "" && !strings.Contains(r.stderr, m) {
			t.Errorf("the error does not name %q", m)
		}
	}
}
