package main

import (
	"slices"
	"testing"

	"github.com/kapply/kapply/internal/testcluster"
)

// TestRecordWritersUseTheFieldManager: adopt, last-applied set and release
// write the record under --field-manager, kubectl's client-side apply
// manager by default (kubectl edit-last-applied's default), never a name of
// their own.
func TestRecordWritersUseTheFieldManager(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	for _, name := range []string{"adopted", "set", "released"} {
		kubectl(t, "create", "configmap", name, "-n", ns, "--from-literal=a=1")
	}
	dir := writeFiles(t, map[string]string{
		"adopted.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: adopted}\ndata: {a: \"1\"}\n",
		"set.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: set}\ndata: {a: \"1\"}\n",
		"released.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: released}\ndata: {a: \"1\"}\n",
	})
	file := func(name string) string { return dir + "/" + name + ".yaml" }
	steps := [][]string{
		{"adopt", "-f", file("adopted")},
		{"last-applied", "set", "-f", file("set"), "--create-annotation", "--field-manager", "ci-bot"},
		{"adopt", "-f", file("released")},
		{"release", "-f", file("released"), "--field", "data.a", "--field-manager", "ci-bot"},
	}
	for _, args := range steps {
		if r := kapply(t, append(args, "-n", ns)...); r.code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	for name, want := range map[string][]string{
		"adopted":  {"kubectl-client-side-apply/Update"},
		"set":      {"ci-bot/Update"},
		"released": {"ci-bot/Update", "kubectl-client-side-apply/Update"},
	} {
		got := slices.DeleteFunc(managers(t, ns, name), func(m string) bool { return m == "kubectl-create/Update" })
		if !slices.Equal(got, want) {
			t.Errorf("%s: managers %v, want %v beside kubectl-create", name, got, want)
		}
	}
}
