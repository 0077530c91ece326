package fleet

import "testing"

// A context whose name is no valid glob or regexp is picked by its exact
// name; the same pattern with no such context is still refused as bad.
func TestSelectContextNamedLikeABadPattern(t *testing.T) {
	clusters := []Cluster{{Context: "bad["}, {Context: "re:("}, {Context: "ok"}}
	for _, name := range []string{"bad[", "re:("} {
		got, err := Select(clusters, []string{name})
		if err != nil || len(got) != 1 || got[0].Context != name {
			t.Errorf("Select(%q) = %v, %v; want the context of that name", name, got, err)
		}
	}
	for _, pattern := range []string{"other[", "re:)"} {
		if got, err := Select(clusters, []string{pattern}); err == nil {
			t.Errorf("Select(%q) = %v, want an error", pattern, got)
		}
	}
}
