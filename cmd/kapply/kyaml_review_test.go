package main

import (
	"strings"
	"testing"

	"github.com/kapply/kapply/internal/testcluster"
)

// TestApplyOutputOmitsManagedFields: apply -o yaml, json and kyaml print
// the objects without metadata.managedFields, one object or several (a
// List), as kubectl apply -o does (its --show-managed-fields is false by
// default); kapply printed them.
func TestApplyOutputOmitsManagedFields(t *testing.T) {
	testcluster.Require(t, cluster)
	ns := cluster.Namespace(t)
	one := writeFiles(t, map[string]string{"a.yaml": labelledConfigMap("a", "app: x", "k: v")})
	two := writeFiles(t, map[string]string{"a.yaml": labelledConfigMap("a", "app: x", "k: v"), "b.yaml": labelledConfigMap("b", "app: x", "k: v")})
	for _, output := range []string{"yaml", "json", "kyaml"} {
		for _, dir := range []string{one, two} {
			r := kapply(t, "apply", "-f", dir, "-n", ns, "-o", output)
			if r.code != 0 || !strings.Contains(r.stdout, "last-applied-configuration") || strings.Contains(r.stdout, "managedFields") {
				t.Errorf("apply -o %s: exit %d, want the objects without managedFields\n%s\n%s", output, r.code, r.stdout, r.stderr)
			}
		}
	}
}
