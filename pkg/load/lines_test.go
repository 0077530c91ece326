package load

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadGivesTheLineOfEachDocument: an object read from a local file
// knows the line its document's content starts on (Source.Line), through
// leading comments, every separator the reader takes, Lists, CRLF and JSON
// streams; through kustomize, which the builder reads, the line is 0.
func TestLoadGivesTheLineOfEachDocument(t *testing.T) {
	cm := func(name string) string { return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n" }
	cases := []struct {
		name, file, content string
		want                map[string]int // object name → line
	}{
		{"multi-document", "multi.yaml", cm("a") + "---\n" + cm("b") + "---\n" + cm("c"), map[string]int{"a": 1, "b": 6, "c": 11}},
		{"leading comments and separators", "comments.yaml",
			"# header\n\n---\n# about a\n" + cm("a") + "--- # next\n\n# about b\n" + cm("b") + "---   \n---\n" + cm("c") + "...\n---\n",
			map[string]int{"a": 5, "b": 12, "c": 18}},
		{"empty documents between", "empty.yaml", "---\n---\n\n---\n" + cm("a") + "---\nnull\n---\n" + cm("b"), map[string]int{"a": 5, "b": 12}},
		{"a List's items share its line", "list.yaml", cm("a") + "---\n# the list\napiVersion: v1\nkind: List\nitems:\n- " +
			strings.ReplaceAll(strings.TrimSuffix(cm("b"), "\n"), "\n", "\n  ") + "\n- " +
			strings.ReplaceAll(strings.TrimSuffix(cm("c"), "\n"), "\n", "\n  ") + "\n", map[string]int{"a": 1, "b": 7, "c": 7}},
		{"CRLF", "crlf.yaml", strings.ReplaceAll("# c\n"+cm("a")+"---\n"+cm("b"), "\n", "\r\n"), map[string]int{"a": 2, "b": 7}},
		{"no newline at the end", "short.yaml", "\n\n" + strings.TrimSuffix(cm("a"), "\n"), map[string]int{"a": 3}},
		{"flow style, read by the builder", "flow.yaml", "# flow\n---\n\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: {x: 1}}\n---\n" +
			"{apiVersion: v1, kind: List, items: [{apiVersion: v1, kind: ConfigMap, metadata: {name: b}}, {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}]}\n",
			map[string]int{"a": 4, "b": 9, "c": 9}},
		{"JSON stream", "stream.json", "{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\",\n \"metadata\": {\"name\": \"a\"}}\n\n  {\"apiVersion\": \"v1\",\n\"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"b\"}}\n",
			map[string]int{"a": 1, "b": 4}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), c.file)
			if err := os.WriteFile(path, []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			objects, errs := Load(testGetter, Files{Filenames: []string{path}}, "")
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			if len(objects) != len(c.want) {
				t.Fatalf("%d objects, want %d", len(objects), len(c.want))
			}
			for _, o := range objects {
				if want := c.want[o.Obj.GetName()]; o.Line != want || o.Where().Line != want {
					t.Errorf("%s: line %d (Where %d), want %d", o.Obj.GetName(), o.Line, o.Where().Line, want)
				}
			}
		})
	}
	t.Run("kustomize: unknown", func(t *testing.T) {
		dir := t.TempDir()
		for name, content := range map[string]string{"kustomization.yaml": "resources: [cm.yaml]\n", "cm.yaml": "# c\n" + cm("a")} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		objects, errs := Load(testGetter, Files{Kustomize: dir}, "")
		if len(errs) > 0 || len(objects) != 1 {
			t.Fatalf("%d objects, errors %v", len(objects), errs)
		}
		if objects[0].Line != 0 {
			t.Errorf("line %d through kustomize, want 0 (unknown)", objects[0].Line)
		}
	})
}
