package schema

import (
	"strings"
	"testing"
)

// at walks a dotted path as overrides do: a List is entered through its
// element before the next field name.
func at(t *testing.T, root *Node, path string) *Node {
	t.Helper()
	n := root
	for _, name := range strings.Split(path, ".") {
		if n.TypeOf() == List {
			n = n.Item()
		}
		n = n.Field(name)
		if n == nil {
			t.Fatalf("path %s: no field %q", path, name)
		}
	}
	return n
}
