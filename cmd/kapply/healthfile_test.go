package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestHealthFileRefusedNamingTheRule: a --health-file whose rule lacks
// its current expression, or does not compile, stops apply before
// anything is written, naming the file and the rule.
func TestHealthFileRefusedNamingTheRule(t *testing.T) {
	ns := cluster.Namespace(t)
	dir := writeFiles(t, map[string]string{"cm.yaml": configMapYAML("web", "k", "v")})
	for name, rules := range map[string]string{
		"no-current":  "- apiVersion: example.com/v1\n  kind: Database\n  failed: status.phase == \"Broken\"\n",
		"not-compile": "- apiVersion: example.com/v1\n  kind: Database\n  current: status.phase ==\n",
	} {
		rulesDir := t.TempDir()
		writeFile(t, rulesDir, name+".yaml", rules)
		file := filepath.Join(rulesDir, name+".yaml")
		r := kapply(t, "apply", "-f", dir, "-n", ns, "--health-file", file)
		if r.code == 0 || !strings.Contains(r.stderr, file) || !strings.Contains(r.stderr, "Database") {
			t.Errorf("%s: exit %d, want a failure naming %s and the rule's kind\n%s", name, r.code, file, r.stderr)
		}
		if strings.Contains(r.stdout, "created") {
			t.Errorf("%s: something was applied: %s", name, r.stdout)
		}
	}
}
