package depcheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// maxOptionsFields is the most fields an exported Options struct of the
// library may have: past it, an operation is being handed settings it does
// not read (issue 20: each operation takes only the options it reads).
const maxOptionsFields = 12

// TestOptionsStaySmall: every exported struct type under pkg/ whose name
// ends in "Options" has at most maxOptionsFields fields (each name of a
// field list counts, an embedded field counts one).
func TestOptionsStaySmall(t *testing.T) {
	for _, big := range bigOptions(t, "../../pkg") {
		t.Error(big)
	}
}

// bigOptions lists the exported *Options structs of the non-test Go files
// under root that have too many fields, as "file: Name has N fields".
func bigOptions(t *testing.T, root string) []string {
	t.Helper()
	var found []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(file, func(n ast.Node) bool {
			spec, ok := n.(*ast.TypeSpec)
			if !ok || !spec.Name.IsExported() || !strings.HasSuffix(spec.Name.Name, "Options") {
				return true
			}
			st, ok := spec.Type.(*ast.StructType)
			if !ok {
				return true
			}
			if n := fieldCount(st); n > maxOptionsFields {
				found = append(found, fset.Position(spec.Pos()).String()+": "+spec.Name.Name+" has "+strconv.Itoa(n)+" fields, want at most "+strconv.Itoa(maxOptionsFields))
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

func fieldCount(st *ast.StructType) int {
	n := 0
	for _, f := range st.Fields.List {
		n += max(len(f.Names), 1)
	}
	return n
}
