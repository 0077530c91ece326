package depcheck

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/kapply/kapply/"

// layers are the packages of pkg/ by tier; a package may import those of
// lower tiers only, so the arrows of the package map stay one-way:
// cmd → load, apply, diff → plan → merge, ownership, cluster → lastapplied,
// schema, export → fieldpath → shown; apply → apply/prune, delete → wait,
// plan, cluster. pkg/apply builds on the tiers below it but not on load: it
// takes plain objects (see TestLibraryTakesNoCLI). pkg/health (CEL health
// rules) sits with pkg/wait but is imported by cmd only: pkg/wait takes its
// Checker.Status as a function (TestHealthStaysOutOfTheLibrary). pkg/shown, how text
// from input is printed, is a leaf every package that prints may use.
var layers = [][]string{
	{"pkg/shown"},
	{"pkg/fieldpath", "pkg/secretmask"},
	{"pkg/lastapplied", "pkg/schema", "pkg/history"},
	{"pkg/merge", "pkg/ownership", "pkg/export", "pkg/cluster"},
	{"pkg/plan"},
	{"pkg/load", "pkg/diff", "pkg/wait", "pkg/ignore", "pkg/health", "pkg/check"},
	{"pkg/apply/prune", "pkg/delete"},
	{"pkg/apply"},
	{"pkg/fleet"},
}

func TestImportsPointDown(t *testing.T) {
	tier := map[string]int{}
	for n, pkgs := range layers {
		for _, p := range pkgs {
			tier[p] = n
		}
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "../../pkg/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		from := strings.TrimPrefix(fields[0], module)
		fromTier, known := tier[from]
		if !known {
			t.Errorf("%s is not in the package map (internal/depcheck/layers_test.go)", from)
			continue
		}
		for _, imp := range fields[1:] {
			if from == "pkg/apply" && imp == "k8s.io/cli-runtime/pkg/genericclioptions" {
				t.Errorf("pkg/apply imports %s: the library takes clients, not kubeconfig flags", imp)
			}
			to, ours := strings.CutPrefix(imp, module)
			if !ours {
				continue
			}
			if strings.HasPrefix(to, "cmd/") || tier[to] >= fromTier {
				t.Errorf("%s imports %s: imports point from a higher tier to a lower one only", from, to)
			}
		}
	}
}
