package load

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// TestParallelLoadAsOneBuilder: a tree read file by file on every core
// (readLocal) gives the objects, sources and errors of one builder over the
// whole tree, in the same order — bad documents, files without a manifest
// extension and subdirectories (with and without -R) included.
func TestParallelLoadAsOneBuilder(t *testing.T) {
	dir := t.TempDir()
	write := func(path, content string) {
		t.Helper()
		path = filepath.Join(dir, path)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 150 {
		sub := fmt.Sprintf("sub-%d", i%3)
		if i%5 == 0 {
			sub = "."
		}
		switch i % 7 {
		case 0:
			write(filepath.Join(sub, fmt.Sprintf("bad-%03d.yaml", i)), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x\n")
		case 1:
			write(filepath.Join(sub, fmt.Sprintf("dup-%03d.yaml", i)), fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: d%d\ndata:\n  k: a\n  k: b\n", i))
		case 2:
			write(filepath.Join(sub, fmt.Sprintf("notes-%03d.txt", i)), "not a manifest")
		case 3:
			write(filepath.Join(sub, fmt.Sprintf("list-%03d.json", i)), fmt.Sprintf(`{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"l%d"}}]}`, i))
		default:
			write(filepath.Join(sub, fmt.Sprintf("cm-%03d.yml", i)), fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c%d\n  labels: {app: a%d}\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s%d\n", i, i%2, i))
		}
	}
	getter := genericclioptions.NewConfigFlags(false)
	for _, recursive := range []bool{true, false} {
		for _, selector := range []string{"", "app=a1"} {
			files := Files{Filenames: []string{dir, filepath.Join(dir, "sub-1", "cm-004.yml")}, Recursive: recursive}
			if n := len(mustListInputs(files)); n < 100 && recursive {
				t.Fatalf("the tree has %d manifests, want at least 100", n)
			}
			got := loadAsBinary(files, selector)
			gotInfos, gotErrs := got.infos, got.errs
			wantInfos, wantErrs := build(getter, files, selector)
			if len(gotInfos) != len(wantInfos) {
				t.Fatalf("-R=%v -l %q: %d objects, want %d", recursive, selector, len(gotInfos), len(wantInfos))
			}
			for i := range gotInfos {
				if gotInfos[i].Source != wantInfos[i].Source || !reflect.DeepEqual(gotInfos[i].Object, wantInfos[i].Object) {
					t.Fatalf("-R=%v -l %q: object %d from %s, want from %s", recursive, selector, i, gotInfos[i].Source, wantInfos[i].Source)
				}
			}
			if fmt.Sprint(gotErrs) != fmt.Sprint(wantErrs) {
				t.Fatalf("-R=%v -l %q: errors\n%v\nwant\n%v", recursive, selector, gotErrs, wantErrs)
			}
			compareObjects(t, got, wantInfos, wantErrs, got.checked)
			objs, errs := got.objects, got.loadErrs
			if len(objs) == 0 || len(errs) == 0 {
				t.Fatalf("-R=%v -l %q: %d objects, %d errors: the tree tests too little", recursive, selector, len(objs), len(errs))
			}
		}
	}
}
